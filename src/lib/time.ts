const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parses an ISO 8601 date (`2026-11-22`, midnight UTC) or date-time (`2026-11-22T05:41:00Z`, offset
 * optional: UTC when absent) strictly: impossible dates such as February 30 are refused rather than rolled
 * over, and so are years before 1970 or after 9999. Returns epoch milliseconds, or null.
 */
export function parseInstant(value: string): { ms: number; dateOnly: boolean } | null {
  const match = INSTANT.exec(value.trim());
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', offset = 'Z'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  let offsetMinutes = 0;
  if (offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const ms =
    Date.UTC(year, month - 1, day, Number(h), Number(mi), Number(s), Math.floor(Number(`0${fraction || '.0'}`) * 1000)) - offsetMinutes * 60_000;
  return { ms, dateOnly: match[4] === undefined };
}

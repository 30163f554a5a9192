// Cells that a spreadsheet would run as a formula are prefixed with a quote (CSV injection).
const FORMULA_START = /^[=+\-@\t\r]/;

/** One RFC 4180 CSV line: fields quoted when needed, formulas neutralised, null as empty. */
export function csvRow(values: readonly unknown[]): string {
  return values
    .map((value) => {
      if (value === null || value === undefined) return '';
      let text = typeof value === 'string' ? value : JSON.stringify(value);
      if (FORMULA_START.test(text)) text = `'${text}`;
      return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(',');
}

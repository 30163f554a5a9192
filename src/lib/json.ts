/** Parses a JSON column, falling back when it is empty or corrupt (never throws on read paths). */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

// Printable ASCII but for the quote and the backslash: such a string is its own JSON body.
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `JSON.stringify` of a string, without the call for the strings that need no escaping (most ids, URLs, keys). */
export function jsonString(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

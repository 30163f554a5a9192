import { AppError, type FieldError } from '../../http/errors.js';

/** The origin an allowed-origins entry means, or null when it is not one (a path, a query, no host…). */
export function normalizeOrigin(raw: string): string | null {
  const text = raw.trim();
  if (text === '*') return '*';
  // scheme://authority, then nothing but an optional lone "/". URL() alone would silently drop a path.
  const parts = /^(https?):\/\/([^/?#@\s]+)(\/?)$/i.exec(text);
  if (!parts) return null;
  try {
    // URL lower-cases the scheme and host, drops the default port and encodes an international name.
    const origin = new URL(`${parts[1]}://${parts[2]}`).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Allowed origins as stored: each normalized (`https://www.Example.co.uk:443/` → `https://www.example.co.uk`),
 * duplicates collapsed, in the order given. An entry that is not an origin is refused in words.
 */
export function normalizeAllowedOrigins(raw: readonly string[]): string[] {
  const errors: FieldError[] = [];
  const out = new Set<string>();
  raw.forEach((entry, index) => {
    const origin = normalizeOrigin(entry);
    if (origin !== null) out.add(origin);
    else {
      const got = entry.length > 80 ? `${entry.slice(0, 80)}…` : entry;
      errors.push({
        pointer: `/allowed_origins/${index}`,
        message: `allowed_origins[${index}] must be an origin such as https://www.example.com (scheme and host, no path): got "${got}"`,
      });
    }
  });
  if (errors.length > 0) throw AppError.validation(`${errors[0]!.message}.`, errors.slice(0, 10));
  return [...out];
}

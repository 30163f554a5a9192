import { dictionary } from '@zxcvbn-ts/language-common';

/** Fewest characters a new password may have. */
export const PASSWORD_MIN_LENGTH = 10;
/** Most characters (argon2 hashes anything, but a bound keeps a request's hashing cost bounded). */
export const PASSWORD_MAX_LENGTH = 256;

// zxcvbn-ts's list of the ~49,000 most common passwords (lowercase), made into a set the first time a
// password is checked and kept for the life of the process.
let common: Set<string> | null = null;

function commonPasswords(): Set<string> {
  common ??= new Set(dictionary['passwords-common']);
  return common;
}

/** Why a new password cannot be used (a field message), or null when it can. Case does not make a common password uncommon. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (commonPasswords().has(password.toLowerCase())) return 'is one of the most common passwords';
  return null;
}

import { hash, verify, type Algorithm } from '@node-rs/argon2';

// argon2id with OWASP's baseline parameters (19 MiB, 2 passes, 1 lane): ~20-40 ms per hash here, enough
// to make offline guessing expensive without making sign-in slow. See docs/decisions/0006-dashboard.md.
const ARGON2ID = 2 as Algorithm;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Hashes a password as an argon2id PHC string (salt included). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** Checks a password against a stored PHC string; a malformed hash is simply "no match". */
export async function passwordMatches(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// Compared against when the email is unknown, so an unknown email takes as long as a wrong password
// (no account enumeration by timing).
let decoy: Promise<string> | null = null;

/** Spends the time of one verification without an account. */
export async function verifyDecoy(password: string): Promise<void> {
  decoy ??= hashPassword('decoy password that never matches');
  await passwordMatches(await decoy, password);
}

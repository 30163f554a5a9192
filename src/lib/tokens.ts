import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh opaque token: 256 random bits, base64url (session cookies, CSRF tokens, invitation links). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a high-entropy token: SHA-256 hex (a leaked table yields no usable token). */
export function tokenHash(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time equality of two strings (different lengths are simply unequal). */
export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

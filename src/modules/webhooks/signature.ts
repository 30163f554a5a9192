import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret, Standard Webhooks style: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** `v1,<base64 HMAC-SHA256>` of `id.timestamp.body` under one `whsec_…` secret (its base64 part decoded is the key). */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per live secret, space-separated (two during a rotation's overlap). */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signature(secret, id, timestampSeconds, body)).join(' ');
}

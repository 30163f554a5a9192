import { hash, randomInt, timingSafeEqual } from 'node:crypto';

// Format (like GitHub's tokens): "wsk_" + 32 random base62 characters (~190 bits) + 6 base62 characters
// of CRC32 over the random part. Scanners can recognise a key and reject typos without a lookup.
const PREFIX = 'wsk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const SHAPE = new RegExp(`^${PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** A freshly generated API key secret. */
export function generateApiKeySecret(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += BASE62[randomInt(62)];
  return PREFIX + body + base62(crc32(body), CHECKSUM_LENGTH);
}

/** True when the text has the key shape and a correct checksum; says nothing about whether it exists. */
export function isWellFormedApiKey(secret: string): boolean {
  if (!SHAPE.test(secret)) return false;
  const body = secret.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  const checksum = secret.slice(PREFIX.length + BODY_LENGTH);
  return base62(crc32(body), CHECKSUM_LENGTH) === checksum;
}

/** The stored form of a secret: SHA-256 hex. A high-entropy key needs no slow hash. */
export function hashApiKeySecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time equality of two digests of equal length, each as bytes or hex. */
export function digestsEqual(a: Buffer | string, b: Buffer | string): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'hex') : a;
  const right = typeof b === 'string' ? Buffer.from(b, 'hex') : b;
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The part of a secret that may be shown again (in key lists): the prefix and 4 characters. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, PREFIX.length + 4);
}

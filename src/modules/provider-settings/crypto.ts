import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type DatabaseConfig } from '../../config.js';

/** Bytes of an AES-256 key. */
const KEY_BYTES = 32;
/** Bytes of a GCM nonce (96 bits, as NIST recommends). */
const IV_BYTES = 12;
/** Version tag of the stored format: `v1.<iv>.<tag>.<ciphertext>`, each base64url. */
const FORMAT = 'v1';
/** How every value `encryptSecret` stores begins: tells a ciphertext from a secret stored in clear by an older version. */
export const ENCRYPTED_PREFIX = `${FORMAT}.`;
/**
 * The additional data of the provider API key: binds a ciphertext to its column, so one copied into another
 * field does not decrypt. Other secrets pass their own (a webhook secret names its endpoint).
 */
export const PROVIDER_API_KEY_CONTEXT = 'provider_settings.api_key';

/**
 * SECRET_KEY: 32 bytes as base64 (44 characters, `openssl rand -base64 32`) or hex (64 characters,
 * `openssl rand -hex 32`). Null when unset. The message never repeats the value.
 */
export function parseSecretKey(raw: string | undefined): Buffer | null {
  const value = raw?.trim();
  if (!value) return null;
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{42,43}={0,2}$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === KEY_BYTES) return bytes;
  }
  throw new ConfigError(
    `SECRET_KEY must be 32 bytes written as base64 (44 characters, e.g. the output of \`openssl rand -base64 32\`) or hex (64 characters, \`openssl rand -hex 32\`); got ${value.length} characters`,
  );
}

/**
 * Encrypts a secret with AES-256-GCM under `key`: a fresh nonce per call, the tag kept beside the ciphertext,
 * `context` as additional data (the same context is needed to decrypt).
 */
export function encryptSecret(key: Buffer, plaintext: string, context = PROVIDER_API_KEY_CONTEXT): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/**
 * Decrypts what `encryptSecret` stored; throws when the key or the context is not the one it was encrypted
 * with (or the text was altered).
 */
export function decryptSecret(key: Buffer, stored: string, context = PROVIDER_API_KEY_CONTEXT): string {
  const [format, iv, tag, ciphertext] = stored.split('.');
  if (format !== FORMAT || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/** Where the key that encrypts stored secrets comes from. */
export type SecretKeyOrigin =
  /** SECRET_KEY. */
  | { kind: 'environment' }
  /** A file beside the SQLite database, generated on the first start without SECRET_KEY. */
  | { kind: 'file'; file: string }
  /** An in-memory SQLite database: a key for this process only, like the data. */
  | { kind: 'memory' }
  /** PostgreSQL without SECRET_KEY: none (instances would each generate a different one); API keys and webhook secrets cannot be stored. */
  | { kind: 'none' };

/** The key (null: none) and where it came from. */
export interface SecretKey {
  key: Buffer | null;
  origin: SecretKeyOrigin;
}

/** The file the generated key is kept in: `secret.key` beside the SQLite database file. */
export function secretKeyFile(databasePath: string): string {
  return path.join(path.dirname(databasePath), 'secret.key');
}

/**
 * The key that encrypts stored secrets: SECRET_KEY when set; on SQLite, else, the `secret.key` file beside
 * the database, generated (mode 0600) on the first start, with one log line saying where. PostgreSQL never
 * generates one: every instance sharing the database would make its own.
 */
export function resolveSecretKey(secretKey: Buffer | null, database: DatabaseConfig, log: { info(message: string): void }): SecretKey {
  if (secretKey) return { key: secretKey, origin: { kind: 'environment' } };
  if (database.kind === 'postgres') return { key: null, origin: { kind: 'none' } };
  if (database.path === ':memory:') return { key: randomBytes(KEY_BYTES), origin: { kind: 'memory' } };
  const file = secretKeyFile(database.path);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // `wx`: two processes starting at once on one file never overwrite each other's key; the loser reads the winner's.
    try {
      fs.writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      log.info(`SECRET_KEY is not set: generated a key for stored secrets (provider API keys, webhook signing secrets) and wrote it to ${file} (mode 0600); back it up with the database`);
    } catch (writeError) {
      if ((writeError as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError;
    }
    text = fs.readFileSync(file, 'utf8');
  }
  let key: Buffer | null = null;
  try {
    key = parseSecretKey(text);
  } catch {
    key = null;
  }
  if (!key) throw new ConfigError(`${file} does not hold a valid key (32 bytes as base64 or hex): restore it from a backup, or set SECRET_KEY`);
  return { key, origin: { kind: 'file', file } };
}

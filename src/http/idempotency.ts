import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { ControlledTransaction, Kysely } from 'kysely';
import { tryTransactionLock } from '../db/dialect.js';
import type { Database } from '../db/schema.js';
import { canonicalJson } from '../lib/canonical-json.js';
import type { Clock } from '../lib/clock.js';
import { idempotencyRepository, type IdempotencyRecord } from '../modules/idempotency/repository.js';
import { AppError } from './errors.js';
import { hookList } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A field of this route's answer that holds a secret shown once (a webhook signing secret): its stored
     * result keeps the field as null, with `<field>_note` saying why, so no secret is ever kept in an
     * idempotency record and a replay never returns it.
     */
    oneTimeSecret?: OneTimeSecret;
  }
  interface FastifyRequest {
    /** Set while an idempotent POST runs: its key and the transaction its write must join. */
    idempotency?: IdempotentWrite;
  }
}

interface IdempotentWrite {
  key: string;
  trx: ControlledTransaction<Database>;
  /** The record to store with the write: everything but the response. */
  pending: Omit<IdempotencyRecord, 'response_status' | 'response_headers' | 'response_body'>;
  settled: boolean;
}

/** A field of an answer shown once, and the note its replay carries instead (`<field>_note`). */
export interface OneTimeSecret {
  field: string;
  note: string;
}

/**
 * The body to store for a replay: the one-time secret field set to null and its note added (JSON answers
 * whose field holds a value); any other body as it is.
 */
export function replayableBody(body: string, secret: OneTimeSecret | undefined): string {
  if (!secret) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return body;
  const fields = parsed as Record<string, unknown>;
  if (fields[secret.field] === undefined || fields[secret.field] === null) return body;
  return JSON.stringify({ ...fields, [secret.field]: null, [`${secret.field}_note`]: secret.note });
}

/** How long a stored result is replayed (the OpenAPI document and the README say 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** What a concurrent duplicate is told to wait: the first request holds the key for as long as it runs. */
const IN_USE_RETRY_AFTER_SECONDS = 1;
/** Statuses that store nothing: refused before any work (or a 5xx, which rolls back). */
const NOT_STORED = new Set([400, 401, 403, 413, 415, 429]);
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'];

/**
 * Parses an Idempotency-Key header: 1–255 printable ASCII characters, sent plain or as a quoted
 * Structured-Field string (`"…"` with `\"` and `\\` escapes). Anything else is a 400.
 */
export function parseIdempotencyKey(raw: string): string {
  const invalid = () =>
    new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters, plain or as a quoted string.', {
      errors: [{ parameter: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
    });
  let key = raw;
  if (raw.startsWith('"')) {
    const match = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(raw);
    if (!match) throw invalid();
    key = match[1]!.replace(/\\(["\\])/g, '$1');
  }
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) throw invalid();
  return key;
}

function fingerprint(request: FastifyRequest): string {
  return hash('sha256', `${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`, 'hex');
}

function replay(reply: FastifyReply, stored: IdempotencyRecord) {
  const headers = JSON.parse(stored.response_headers) as Record<string, string>;
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.code(stored.response_status).header('Idempotent-Replayed', 'true').send(stored.response_body);
}

const inUse = () =>
  new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.', {}, {
    'Retry-After': String(IN_USE_RETRY_AFTER_SECONDS),
  });

/** The name of the transaction lock a request holds on its key (`tryTransactionLock`). */
export function idempotencyLockName(apiKeyId: string, key: string): string {
  return `idempotency\n${apiKeyId}\n${key}`;
}

/** True for a unique-constraint violation (SQLite or PostgreSQL). */
function isDuplicateKey(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * The one idempotency layer (every POST under /api/v1), the same on both databases (decision 0018). After
 * validation it opens the transaction the write joins and, in it, locks the key (`tryTransactionLock`: a
 * concurrent duplicate gets 409 with Retry-After) and looks up its record: a live one is replayed (or, for a
 * different request under the same key, 422); an expired one is deleted. When the response is ready, its
 * record is inserted in that same transaction and committed with the write, so a record exists exactly
 * when its write does. Refusals and 5xx roll everything back and store nothing, so a retry can succeed;
 * other errors (404, 409, 422 …) roll the write back too, and only their answer is stored, to be replayed.
 * The primary key on (API key, Idempotency-Key) is the last word: whatever happens, one write commits.
 */
export function idempotencyLayer(db: Kysely<Database>, clock: Clock) {
  async function rollback(write: { trx: ControlledTransaction<Database> }): Promise<void> {
    if (!write.trx.isCommitted && !write.trx.isRolledBack) await write.trx.rollback().execute();
  }

  /** Locks the key in the request's transaction; returns its live record, if any (deleting an expired one). */
  async function claim(trx: ControlledTransaction<Database>, apiKeyId: string, key: string, now: string): Promise<IdempotencyRecord | undefined> {
    if (!(await tryTransactionLock(trx, idempotencyLockName(apiKeyId, key)))) throw inUse();
    const existing = await idempotencyRepository.find(trx, apiKeyId, key);
    if (existing && existing.expires_at <= now) {
      await idempotencyRepository.remove(trx, apiKeyId, key); // its window has passed: the key is free again
      return undefined;
    }
    return existing;
  }

  const layer = {
    async preHandler(request: FastifyRequest, reply: FastifyReply) {
      const header = request.headers['idempotency-key'];
      if (request.method !== 'POST' || !request.principal || header === undefined) return;
      if (Array.isArray(header)) throw parseIdempotencyKey('');
      const key = parseIdempotencyKey(header);
      const apiKeyId = request.principal.keyId;
      const print = fingerprint(request);
      const now = clock.now();
      const nowIso = now.toISOString();
      const trx = await db.startTransaction().execute();
      let existing: IdempotencyRecord | undefined;
      try {
        existing = await claim(trx, apiKeyId, key, nowIso);
      } catch (error) {
        await rollback({ trx });
        throw error;
      }
      if (existing) {
        // Rolled back before answering: on SQLite that waits until what was read is durable (group commit).
        await rollback({ trx });
        if (existing.fingerprint !== print) {
          throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used for a different request (method, path or body).');
        }
        return replay(reply, existing);
      }
      const pending = { api_key_id: apiKeyId, idempotency_key: key, fingerprint: print, created_at: nowIso, expires_at: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString() };
      request.idempotency = { key, trx, pending, settled: false };
    },

    async onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
      const write = request.idempotency;
      if (!write || write.settled) return payload;
      write.settled = true;
      const status = reply.statusCode;
      if (status >= 500 || NOT_STORED.has(status)) {
        await rollback(write);
        return payload;
      }
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((name) => reply.hasHeader(name)).map((name) => [name, String(reply.getHeader(name))]));
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : JSON.stringify(payload ?? null);
      // The answer goes out whole; what is kept for a replay never holds the route's one-time secret.
      const stored = replayableBody(body, request.routeOptions.config.oneTimeSecret);
      const record = { ...write.pending, response_status: status, response_headers: JSON.stringify(headers), response_body: stored };
      try {
        if (status >= 400) {
          // An error answer is replayed, but whatever its request wrote before failing is not kept: the
          // write's transaction rolls back and the record is stored on its own (a duplicate that ran in the
          // meantime stored its own answer first).
          await rollback(write);
          await idempotencyRepository.insert(db, record).catch((error: unknown) => {
            if (!isDuplicateKey(error)) throw error;
          });
          return payload;
        }
        await idempotencyRepository.insert(write.trx, record);
        await write.trx.commit().execute();
        return payload;
      } catch (error) {
        await rollback(write).catch((rollbackError: unknown) => request.log.error({ err: rollbackError }, 'idempotency: rollback failed'));
        // The resource was not created after all: its address and version must not reach the client.
        reply.removeHeader('location');
        reply.removeHeader('etag');
        // Another transaction stored a result under the key first (only possible if the lock was bypassed).
        throw isDuplicateKey(error) ? inUse() : error;
      }
    },

    /** Safety net: a request that ended without onSend (aborted) rolls back. */
    async onResponse(request: FastifyRequest) {
      const write = request.idempotency;
      if (!write || write.settled) return;
      write.settled = true;
      await rollback(write);
    },

    /** Fastify onRoute hook: POST routes get the layer's preHandler, onSend and onResponse hooks. */
    attachToPosts(route: RouteOptions): void {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.includes('POST')) return;
      route.preHandler = [...hookList(route.preHandler), layer.preHandler];
      route.onSend = [...hookList(route.onSend), layer.onSend];
      route.onResponse = [...hookList(route.onResponse), layer.onResponse];
    },

    /** Deletes expired records (the window itself is enforced on read). */
    async sweep(): Promise<number> {
      return idempotencyRepository.sweep(db, clock.now().toISOString());
    },
  };
  return layer;
}

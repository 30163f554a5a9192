import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { ControlledTransaction, Kysely } from 'kysely';
import { sqliteConnectionsOf } from '../db/sqlite.js';
import type { Database, IdempotencyKeysTable } from '../db/schema.js';
import { canonicalJson } from '../lib/canonical-json.js';
import type { Clock } from '../lib/clock.js';
import { idempotencyRepository, sqliteRecordRepository } from '../modules/idempotency/repository.js';
import { sqliteRecordStore } from '../modules/idempotency/sqlite-records.js';
import { AppError } from './errors.js';
import { hookList } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set while an idempotent POST runs: its key and the transaction its write must join. */
    idempotency?: IdempotentWrite;
  }
}

interface IdempotentWrite {
  apiKeyId: string;
  key: string;
  trx: ControlledTransaction<Database>;
  settled: boolean;
  /** The record to write complete in onSend, where no marker was claimed (the embedded shape); else null. */
  unwritten: IdempotencyKeysTable | null;
  /** SQLite: the rowid of the taken-over marker, or of the record once appended; else null. */
  recordId: number | null;
}

/** How long a stored result is replayed. Published in the OpenAPI document and the README. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long an in-flight marker blocks duplicates before a retry may take it over (its request died). */
const LOCK_MS = 60_000;
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

function replay(reply: FastifyReply, stored: { response_status: number | null; response_headers: string | null; response_body: string | null }) {
  const headers = JSON.parse(stored.response_headers ?? '{}') as Record<string, string>;
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.code(stored.response_status ?? 200).header('Idempotent-Replayed', 'true').send(stored.response_body ?? '');
}

const inUse = () => new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.');

/**
 * The one idempotency layer (every POST under /api/v1). After validation it claims the key with an
 * in-flight marker (on the embedded shape, looks it up), replays a stored result, or refuses a duplicate (409) or a different request under the
 * same key (422). It then opens the transaction the write joins; when the response is ready, the result is
 * stored in that same transaction and committed with the write, or everything is rolled back and the key
 * released (nothing stored for refusals and 5xx, so a retry can succeed).
 *
 * PostgreSQL: the in-flight marker commits on its own first, so a concurrent duplicate on any instance sees
 * it (409). SQLite: the one writer runs one transaction at a time, and this one holds it until the response
 * is stored, so a duplicate waits for the first request anyway: the key is only looked up here, and its
 * record appended once, complete, with the write (onSend). Records are found through an index in memory
 * (src/modules/idempotency/sqlite-records.ts, decision 0017).
 */
export function idempotencyLayer(db: Kysely<Database>, clock: Clock) {
  const connections = sqliteConnectionsOf(db);
  const records = connections ? sqliteRecordStore(db, connections) : null;

  async function release(write: IdempotentWrite): Promise<void> {
    if (!write.trx.isCommitted && !write.trx.isRolledBack) await write.trx.rollback().execute();
    if (records) {
      if (write.unwritten && write.recordId !== null) records.forget(write.apiKeyId, write.key, write.recordId);
      // A taken-over marker is deleted, so a retry can run; a key that was only looked up has none.
      else if (!write.unwritten && write.recordId !== null) await sqliteRecordRepository.release(db, write.recordId);
      return;
    }
    await idempotencyRepository.release(db, write.apiKeyId, write.key);
  }

  /** What a live record under the key means for this request: a replay, a 422, a 409, or (true) a takeover. */
  async function decide(
    reply: FastifyReply,
    existing: IdempotencyKeysTable | undefined,
    print: string,
    takeOver: () => Promise<boolean>,
  ): Promise<true | FastifyReply> {
    if (!existing) throw inUse();
    if (existing.fingerprint !== print) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used for a different request (method, path or body).');
    }
    if (existing.state === 'completed') return replay(reply, existing);
    if (!(await takeOver())) throw inUse();
    return true;
  }

  const layer = {
    async preHandler(request: FastifyRequest, reply: FastifyReply) {
      const header = request.headers['idempotency-key'];
      if (request.method !== 'POST' || !request.principal || header === undefined) return;
      if (Array.isArray(header)) throw parseIdempotencyKey('');
      const key = parseIdempotencyKey(header);
      const apiKeyId = request.principal.keyId;
      const now = clock.now();
      const nowIso = now.toISOString();
      const lockedUntil = new Date(now.getTime() + LOCK_MS).toISOString();
      const marker: IdempotencyKeysTable = {
        api_key_id: apiKeyId,
        idempotency_key: key,
        fingerprint: fingerprint(request),
        state: 'in_flight',
        locked_until: lockedUntil,
        response_status: null,
        response_headers: null,
        response_body: null,
        created_at: nowIso,
        expires_at: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
      };
      if (!records) {
        // PostgreSQL: the marker commits first; a live record under the key decides instead.
        if (!(await idempotencyRepository.claim(db, marker, nowIso))) {
          const existing = await idempotencyRepository.findLive(db, apiKeyId, key, nowIso);
          const outcome = await decide(reply, existing, marker.fingerprint, () => idempotencyRepository.takeOver(db, apiKeyId, key, nowIso, lockedUntil));
          if (outcome !== true) return outcome;
        }
        request.idempotency = { apiKeyId, key, trx: await db.startTransaction().execute(), settled: false, unwritten: null, recordId: null };
        return;
      }
      const trx = await db.startTransaction().execute();
      let taken: number | null = null;
      try {
        const found = await records.find(trx, apiKeyId, key);
        if (found && found.expires_at <= nowIso) {
          await records.remove(trx, found); // its window has passed: the key is free again
        } else if (found) {
          const outcome = await decide(reply, found, marker.fingerprint, () => sqliteRecordRepository.takeOver(trx, found.id, nowIso, lockedUntil));
          if (outcome !== true) {
            await trx.rollback().execute();
            return outcome;
          }
          taken = found.id;
        }
      } catch (error) {
        if (!trx.isRolledBack) await trx.rollback().execute();
        throw error;
      }
      // A taken-over marker is completed in place; otherwise the record is appended, complete, in onSend.
      request.idempotency = { apiKeyId, key, trx, settled: false, unwritten: taken === null ? marker : null, recordId: taken };
    },

    async onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
      const write = request.idempotency;
      if (!write || write.settled) return payload;
      write.settled = true;
      const status = reply.statusCode;
      try {
        if (status >= 500 || NOT_STORED.has(status)) {
          await release(write);
          return payload;
        }
        const headers = Object.fromEntries(
          REPLAYED_HEADERS.filter((name) => reply.hasHeader(name)).map((name) => [name, String(reply.getHeader(name))]),
        );
        const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : JSON.stringify(payload ?? null);
        const response = { status, headers: JSON.stringify(headers), body };
        if (write.unwritten) {
          // SQLite: the record, complete, appended with the write.
          const row = { ...write.unwritten, state: 'completed' as const, locked_until: null, response_status: status, response_headers: response.headers, response_body: body };
          write.recordId = await records!.append(write.trx, row);
        } else if (records) {
          await sqliteRecordRepository.complete(write.trx, write.recordId!, response);
        } else {
          await idempotencyRepository.complete(write.trx, write.apiKeyId, write.key, response);
        }
        await write.trx.commit().execute();
        return payload;
      } catch (error) {
        await release(write).catch((releaseError: unknown) => request.log.error({ err: releaseError }, 'idempotency: release failed'));
        throw error;
      }
    },

    /** Safety net: a request that ended without onSend (aborted) rolls back and frees its key. */
    async onResponse(request: FastifyRequest) {
      const write = request.idempotency;
      if (!write || write.settled) return;
      write.settled = true;
      await release(write);
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
      const now = clock.now().toISOString();
      return records ? records.sweep(now) : idempotencyRepository.sweep(db, now);
    },
  };
  return layer;
}

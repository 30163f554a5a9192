import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKeySecret } from '../../src/lib/api-key-format.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { auditEvents, expectProblem, failInserts, idempotencyRows, listCount, send, testClock, uniqueKey, writeElsewhere } from './support.js';

// What an Idempotency-Key keeps when its request is refused or fails: nothing, so a retry can succeed.

describe('nothing is stored for refused or failed requests', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const noStoredRow = async (app: TestApp['app'], key: string) => {
    const rows = await idempotencyRows(app, key);
    expect(rows).toEqual([]);
  };

  it('401: a bad API key', async () => {
    const tenant = await t.tenant();
    const key = uniqueKey('401');
    const refused = await send(t.app, generateApiKeySecret(), 'POST', '/api/v1/leads', { email: 'a@example.com' }, { 'idempotency-key': key });
    expectProblem(refused, 401, 'invalid_api_key');
    await noStoredRow(t.app, key);
    const retry = await tenant.request('POST', '/api/v1/leads', { email: 'a@example.com' }, { 'idempotency-key': key });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('403: a key without the scope; the same key succeeds once granted it', async () => {
    const tenant = await t.tenant();
    const reader = await tenant.newKey(['leads:read']);
    const key = uniqueKey('403');
    expectProblem(await send(t.app, reader.key, 'POST', '/api/v1/leads', { email: 'b@example.com' }, { 'idempotency-key': key }), 403, 'insufficient_scope');
    await noStoredRow(t.app, key);
    // An operator grants the scope from outside the service (keys' scopes have no API): another connection.
    await writeElsewhere(t, `update api_keys set scopes = '["leads:read","leads:write"]' where id = '${reader.id}'`);
    const retry = await send(t.app, reader.key, 'POST', '/api/v1/leads', { email: 'b@example.com' }, { 'idempotency-key': key });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it.each([
    ['schema validation', { email: 'not-an-email' }],
    ['service validation (no email or phone)', { name: 'Nobody' }],
  ])('400: %s; a corrected retry with the same key succeeds', async (_label, body) => {
    const tenant = await t.tenant();
    const key = uniqueKey('400');
    expectProblem(await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key }), 400, 'validation_failed');
    await noStoredRow(t.app, key);
    const retry = await tenant.request('POST', '/api/v1/leads', { email: 'd@example.com' }, { 'idempotency-key': key });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await listCount(tenant, '/api/v1/leads')).toBe(1);
  });

  it('5xx: a database failure rolls back, stores nothing, and the retry succeeds', async () => {
    const tenant = await t.tenant();
    const key = uniqueKey('500');
    const restore = await failInserts(t.app.database.db, 'leads');
    try {
      expectProblem(await tenant.request('POST', '/api/v1/leads', { email: 'e@example.com' }, { 'idempotency-key': key }), 500, 'internal_error');
    } finally {
      await restore();
    }
    await noStoredRow(t.app, key);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(0);
    expect((await auditEvents(t.app, tenant.workspaceId)).filter((e) => e.action === 'lead.created')).toEqual([]);
    const retry = await tenant.request('POST', '/api/v1/leads', { email: 'e@example.com' }, { 'idempotency-key': key });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    const rows = await idempotencyRows(t.app, key);
    expect(rows.map((r) => r.response_status)).toEqual([201]);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(1);
  });

  it('5xx while storing the result: the write rolls back with it, and the answer names no resource', async () => {
    const tenant = await t.tenant();
    const key = uniqueKey('500-record');
    const restore = await failInserts(t.app.database.db, 'idempotency_records');
    let failed;
    try {
      failed = await tenant.request('POST', '/api/v1/leads', { email: 'f@example.com' }, { 'idempotency-key': key });
    } finally {
      await restore();
    }
    expectProblem(failed, 500, 'internal_error');
    expect(failed.headers.location).toBeUndefined();
    expect(failed.headers.etag).toBeUndefined();
    expect(await listCount(tenant, '/api/v1/leads')).toBe(0);
    const retry = await tenant.request('POST', '/api/v1/leads', { email: 'f@example.com' }, { 'idempotency-key': key });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(1);
  });
});

// Its own app (budget: one request per key per minute), opened after the one above is closed.
describe('nothing is stored for a rate-limited request', () => {
  const time = testClock('2030-01-01T00:00:00.000Z');
  let limited: TestApp;
  beforeAll(async () => {
    // Budgets in process (redis: null) even in the Redis run: Redis keeps its own time, the test clock cannot move it.
    limited = await createTestApp({ rateLimit: { keyPerMinute: 1, workspacePerMinute: 1000 }, redis: null }, { clock: time });
  });
  afterAll(() => limited.close());

  it('429: the request stores nothing and the retry a minute later succeeds', async () => {
    const tenant = await limited.tenant();
    expect((await tenant.request('GET', '/api/v1/leads')).statusCode).toBe(200);
    const key = uniqueKey('429');
    expectProblem(await tenant.request('POST', '/api/v1/leads', { email: 'c@example.com' }, { 'idempotency-key': key }), 429, 'rate_limited');
    expect(await idempotencyRows(limited.app, key)).toEqual([]);
    time.advance(60_000);
    const retry = await tenant.request('POST', '/api/v1/leads', { email: 'c@example.com' }, { 'idempotency-key': key });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect((await idempotencyRows(limited.app, key)).map((r) => r.response_status)).toEqual([201]);
  });
});

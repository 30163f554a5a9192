import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyHash } from '../../src/modules/idempotency/sqlite-records.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { idempotencyRows } from './support.js';

// The embedded shape's idempotency records (decision 0017): a rowid table without indexes, found through
// an index of key hashes in the process's memory. These run on a SQLite file whatever the suite's backend.

describe('idempotency records on SQLite, found through the in-memory index', () => {
  let dir: string;
  let t: TestApp;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idempotency-records-'));
    t = await createTestApp({ database: { kind: 'sqlite', path: path.join(dir, 'app.db') } });
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `use` on a second connection to the app's file, as another process would. */
  function onOtherConnection(use: (other: SQLite.Database) => void): void {
    const other = new SQLite(path.join(dir, 'app.db'));
    try {
      other.pragma('busy_timeout = 5000');
      use(other);
    } finally {
      other.close();
    }
  }

  /** Appends a copy of the record under (API key, key), with `changes`; returns the original row. */
  function appendCopy(other: SQLite.Database, apiKeyId: string, key: string, changes: Record<string, unknown>): Record<string, unknown> {
    const row = other.prepare('select * from idempotency_keys where api_key_id = ? and idempotency_key = ?').get(apiKeyId, key) as Record<string, unknown>;
    const columns = Object.keys(row).filter((column) => column !== 'id');
    other
      .prepare(`insert into idempotency_keys (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`)
      .run(columns.map((column) => (column in changes ? changes[column] : row[column])));
    return row;
  }

  const leads = async (tenant: Awaited<ReturnType<TestApp['tenant']>>) =>
    (await tenant.request('GET', '/api/v1/leads?limit=100')).json().data as { id: string }[];

  /** `response` replays `original` (status, body) and the tenant has only that one lead. */
  async function expectOnlyReplayOf(tenant: Awaited<ReturnType<TestApp['tenant']>>, response: LightMyRequestResponse, original: LightMyRequestResponse) {
    expect(response.statusCode).toBe(201);
    expect(response.headers['idempotent-replayed']).toBe('true');
    expect(response.payload).toBe(original.payload);
    expect(await leads(tenant)).toHaveLength(1);
  }

  it('tells apart two keys whose hashes collide: each gets its own resource and replays its own result', async () => {
    const tenant = await t.tenant();
    // Two keys of this API key with the same 32-bit hash (a birthday search: ~80k candidates on average).
    const seen = new Map<number, string>();
    let pair: [string, string] | null = null;
    for (let i = 0; !pair; i++) {
      const key = `collide-${i}`;
      const hash = keyHash(tenant.keyId, key);
      const other = seen.get(hash);
      if (other) pair = [other, key];
      else seen.set(hash, key);
    }
    const [a, b] = pair;
    expect(keyHash(tenant.keyId, a)).toBe(keyHash(tenant.keyId, b));

    const first = await tenant.request('POST', '/api/v1/leads', { email: 'a@example.com' }, { 'idempotency-key': a });
    const second = await tenant.request('POST', '/api/v1/leads', { email: 'b@example.com' }, { 'idempotency-key': b });
    expect(first.statusCode, first.body).toBe(201);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().id).not.toBe(first.json().id);

    const replayA = await tenant.request('POST', '/api/v1/leads', { email: 'a@example.com' }, { 'idempotency-key': a });
    const replayB = await tenant.request('POST', '/api/v1/leads', { email: 'b@example.com' }, { 'idempotency-key': b });
    expect(replayA.headers['idempotent-replayed']).toBe('true');
    expect(replayA.payload).toBe(first.payload);
    expect(replayB.headers['idempotent-replayed']).toBe('true');
    expect(replayB.payload).toBe(second.payload);
    expect(await leads(tenant)).toHaveLength(2);
  });

  it('finds a record that another connection to the file appended', async () => {
    const tenant = await t.tenant();
    const body = { email: 'elsewhere@example.com' };
    const original = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': 'here' });
    expect(original.statusCode).toBe(201);

    // Another process's connection appends a record for the same request under a new key.
    onOtherConnection((other) => appendCopy(other, tenant.keyId, 'here', { idempotency_key: 'there' }));

    const replay = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': 'there' });
    await expectOnlyReplayOf(tenant, replay, original);
  });

  it('replays the newest record under a key when an expired one was left below it', async () => {
    // A request that found the expired record deletes it in its transaction; if that transaction rolls back
    // (a refusal or a 5xx after the lookup), the row stays, and the next request appends a new record.
    const tenant = await t.tenant();
    const body = { email: 'newest@example.com' };
    const first = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': 'layered' });
    expect(first.statusCode).toBe(201);
    onOtherConnection((other) => {
      const original = appendCopy(other, tenant.keyId, 'layered', {});
      other.prepare('update idempotency_keys set expires_at = ? where id = ?').run('2000-01-01T00:00:00.000Z', original.id);
    });
    expect(await idempotencyRows(t.app, 'layered')).toHaveLength(2);

    const retry = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': 'layered' });
    await expectOnlyReplayOf(tenant, retry, first);
  });

  it('keeps one row per key and no index: the table is appended to, not searched', async () => {
    const tenant = await t.tenant();
    for (let i = 0; i < 3; i++) {
      expect((await tenant.request('POST', '/api/v1/leads', { email: `row${i}@example.com` }, { 'idempotency-key': `row-${i}` })).statusCode).toBe(201);
      expect((await tenant.request('POST', '/api/v1/leads', { email: `row${i}@example.com` }, { 'idempotency-key': `row-${i}` })).headers['idempotent-replayed']).toBe('true');
    }
    for (let i = 0; i < 3; i++) expect(await idempotencyRows(t.app, `row-${i}`)).toHaveLength(1);
    const inspect = new SQLite(path.join(dir, 'app.db'), { readonly: true });
    try {
      const indexes = inspect.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'idempotency_keys'").all();
      expect(indexes).toEqual([]);
    } finally {
      inspect.close();
    }
  });
});

import type { Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/database.js';
import { systemContext } from '../../src/lib/actor.js';
import { newId } from '../../src/lib/ids.js';
import { newSecret } from '../../src/modules/webhooks/signature.js';
import { createTestApp, testConfig, type Tenant, type TestApp } from '../helpers/app.js';
import { backend, dropDatabase, freshUnmigrated } from '../helpers/database.js';
import { expectProblem } from '../helpers/http.js';
import { must } from '../api/support.js';
import { startReceiver, verified, webhookConfig, type Receiver } from './support.js';

// Webhook signing secrets at rest: encrypted in webhook_endpoints (the current one and, after a rotation, the
// previous one), never kept in an idempotency record (a replay answers `secret: null` with a note), secrets
// stored in clear by an earlier version encrypted at the next start, and deliveries still verifying with the
// secret that was shown, by the standardwebhooks package.

type Endpoint = { id: string; secret: string | null; secret_note?: string; previous_secret_expires_at: string | null };
type Db = TestApp['app']['database']['db'];

/** The stored secrets of an endpoint, read straight from the database. */
async function storedSecrets(db: Db, id: string) {
  return db.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();
}

/** Every idempotency record, every column, as one text. */
async function idempotencyText(db: Db): Promise<string> {
  return JSON.stringify(await db.selectFrom('idempotency_records').selectAll().execute());
}

/** The parts of a `whsec_…` secret that must never be found in storage: itself and its base64 key. */
function tracesOf(secret: string): string[] {
  return [secret, secret.slice('whsec_'.length, 'whsec_'.length + 24)];
}

function expectNotStored(text: string, secrets: string[]): void {
  expect(text).not.toContain('whsec_');
  for (const secret of secrets) for (const trace of tracesOf(secret)) expect(text).not.toContain(trace);
}

describe('webhook secrets at rest', () => {
  let t: TestApp;
  let tenant: Tenant;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    t = await createTestApp(webhookConfig());
    tenant = await t.tenant();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });
  afterAll(async () => t.close());

  it('stores the secret encrypted on create and rotate (neither the current nor the previous one in clear); deliveries verify with the secrets shown', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    const created = await must<Endpoint>(tenant.request('POST', '/api/v1/webhook_endpoints', { url: hook.url, events: ['*'] }), 201);
    expect(created.secret).toMatch(/^whsec_/);
    const afterCreate = await storedSecrets(t.app.database.db, created.id);
    expect(afterCreate.secret).toMatch(/^v1\./);
    expect(afterCreate.previous_secret).toBeNull();
    expectNotStored(JSON.stringify(afterCreate), [created.secret!]);

    const rotated = await must<Endpoint>(tenant.request('POST', `/api/v1/webhook_endpoints/${created.id}/rotate_secret`), 200);
    expect(rotated.secret).toMatch(/^whsec_/);
    const afterRotate = await storedSecrets(t.app.database.db, created.id);
    expect(afterRotate.secret).toMatch(/^v1\./);
    expect(afterRotate.previous_secret).toMatch(/^v1\./);
    expect(afterRotate.secret).not.toBe(afterCreate.secret);
    expectNotStored(JSON.stringify(afterRotate), [created.secret!, rotated.secret!]);

    // Decrypted to sign: both signatures of the overlap verify, each with the secret that was shown.
    await must(tenant.request('POST', `/api/v1/webhook_endpoints/${created.id}/test`), 202);
    const [request] = await hook.waitFor(1);
    expect(String(request!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(rotated.secret!, request!)).toMatchObject({ type: 'webhook.test' });
    expect(verified(created.secret!, request!)).toMatchObject({ type: 'webhook.test' });
    expect(() => verified(newSecret(), request!)).toThrow();
  });

  it('keeps no secret in idempotency records: a replayed create or rotate answers the same status and body with secret null and a note', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    const body = { url: hook.url, events: ['lead.updated'] };
    const created = await tenant.request('POST', '/api/v1/webhook_endpoints', body, { 'idempotency-key': 'secret-create' });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json<Endpoint>();
    const rotatePath = `/api/v1/webhook_endpoints/${endpoint.id}/rotate_secret`;
    const rotated = await tenant.request('POST', rotatePath, undefined, { 'idempotency-key': 'secret-rotate' });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const shown = [endpoint.secret!, rotated.json<Endpoint>().secret!];
    expectNotStored(await idempotencyText(t.app.database.db), shown);

    for (const [first, again] of [
      [created, await tenant.request('POST', '/api/v1/webhook_endpoints', body, { 'idempotency-key': 'secret-create' })],
      [rotated, await tenant.request('POST', rotatePath, undefined, { 'idempotency-key': 'secret-rotate' })],
    ] as const) {
      expect(again.statusCode).toBe(first.statusCode);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers.etag).toBe(first.headers.etag);
      const { secret, ...rest } = first.json<Endpoint>();
      expect(secret).toMatch(/^whsec_/);
      expect(again.json()).toEqual({ ...rest, secret: null, secret_note: expect.stringMatching(/shown only once.*rotate the secret/) });
      expect(again.body).not.toContain('whsec_');
    }
    // The replays changed nothing: one endpoint, rotated once, still signing with the secret first shown.
    const list = await must<{ data: Endpoint[] }>(tenant.request('GET', '/api/v1/webhook_endpoints?limit=100'), 200);
    expect(list.data.filter((item) => item.id === endpoint.id)).toHaveLength(1);
    await must(tenant.request('POST', `/api/v1/webhook_endpoints/${endpoint.id}/test`), 202);
    const [request] = await hook.waitFor(1);
    expect(verified(shown[1]!, request!)).toMatchObject({ type: 'webhook.test' });
    expectNotStored(await idempotencyText(t.app.database.db), shown);
  });
});

describe('webhook secrets stored in clear by an earlier version', () => {
  it('are encrypted at the next start (once: a later start finds nothing to do) and still sign, current and previous', async () => {
    const config = testConfig({ ...webhookConfig(), logLevel: 'info' });
    const logs: string[] = [];
    const start = async () => {
      const app = await buildApp(config, { logDestination: { write: (line: string) => void logs.push(line) } });
      await app.ready();
      return app;
    };
    const hook = await startReceiver();
    let app = await start();
    try {
      const workspace = await app.services.workspaces.create('Before encryption');
      const current = newSecret();
      const previous = newSecret();
      const at = new Date().toISOString();
      const id = newId('webhookEndpoint');
      // The row as a version before the encryption wrote it: both secrets in clear, mid-rotation.
      await app.database.db
        .insertInto('webhook_endpoints')
        .values({ id, workspace_id: workspace.id, url: hook.url, description: null, events: '["*"]', enabled: 1, disabled_reason: null, secret: current, previous_secret: previous,
          previous_secret_expires_at: new Date(Date.now() + 3600_000).toISOString(), failing_since: null, created_at: at, updated_at: at })
        .execute();
      await app.close();

      app = await start();
      const sealed = await storedSecrets(app.database.db, id);
      expect(sealed.secret).toMatch(/^v1\./);
      expect(sealed.previous_secret).toMatch(/^v1\./);
      expectNotStored(JSON.stringify(sealed), [current, previous]);
      expect(logs.filter((line) => line.includes('Encrypted the signing secrets of 1 webhook endpoint(s)'))).toHaveLength(1);
      // Not a change of the endpoint: its version (ETag) stays.
      expect((await app.database.db.selectFrom('webhook_endpoints').select('updated_at').where('id', '=', id).executeTakeFirstOrThrow()).updated_at).toBe(at);

      await app.services.webhooks.test(systemContext(workspace.id, 'test'), id);
      const [request] = await hook.waitFor(1);
      expect(verified(current, request!)).toMatchObject({ type: 'webhook.test' });
      expect(verified(previous, request!)).toMatchObject({ type: 'webhook.test' });
      await app.close();

      app = await start();
      expect(await storedSecrets(app.database.db, id)).toEqual(sealed);
      expect(logs.filter((line) => line.includes('Encrypted the signing secrets'))).toHaveLength(1);
    } finally {
      await app.close();
      await hook.close();
      await dropDatabase(config.databaseEnv);
    }
  });

  it.runIf(backend === 'postgres')('PostgreSQL without SECRET_KEY: creating or rotating is 409 secret_key_required; a secret in clear refuses the start in words', async () => {
    const t = await createTestApp({ ...webhookConfig(), secretKey: null }, { replyWorker: false });
    try {
      const tenant = await t.tenant();
      const refused = expectProblem(await tenant.request('POST', '/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] }), 409, 'secret_key_required');
      expect(refused.detail).toContain('Set SECRET_KEY on every instance');
      expect(await t.app.database.db.selectFrom('webhook_endpoints').select('id').execute()).toHaveLength(0);

      const at = new Date().toISOString();
      const id = newId('webhookEndpoint');
      await t.app.database.db
        .insertInto('webhook_endpoints')
        .values({ id, workspace_id: tenant.workspaceId, url: 'http://127.0.0.1:9/hooks', description: null, events: '["*"]', enabled: 1, disabled_reason: null, secret: newSecret(),
          previous_secret: null, previous_secret_expires_at: null, failing_since: null, created_at: at, updated_at: at })
        .execute();
      expectProblem(await tenant.request('POST', `/api/v1/webhook_endpoints/${id}/rotate_secret`), 409, 'secret_key_required');
      const start = buildApp(t.config, { replyWorker: false });
      await expect(start).rejects.toThrow(ConfigError);
      await expect(start).rejects.toThrow(/1 webhook endpoint\(s\) have signing secrets stored in clear .* set SECRET_KEY/);
    } finally {
      await t.close();
    }
  });
});

describe('migration 0024', () => {
  it('removes the secrets from the idempotency records an earlier version stored (secret null, with the note), and leaves other records alone', async () => {
    const { handle, migrator, schema, remove } = await freshUnmigrated();
    try {
      expect((await migrator.migrateTo('0023_conversation_origin')).error).toBeUndefined();
      const secret = newSecret();
      const at = new Date().toISOString();
      const endpoint = { id: 'whep_old', object: 'webhook_endpoint', url: 'https://1.1.1.1/hooks', secret, created_at: at };
      const record = { api_key_id: 'key_old', fingerprint: 'f', response_status: 201, response_headers: '{}', created_at: at, expires_at: at };
      const db = handle.db as unknown as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- rows as the old schema has them
      await db.insertInto('idempotency_records').values([
        { ...record, idempotency_key: 'create', response_body: JSON.stringify(endpoint) },
        { ...record, idempotency_key: 'lead', response_body: JSON.stringify({ id: 'lead_1', note: 'whsec_ is only text here' }) },
      ]).execute();

      await migrateToLatest(handle.db, schema);
      const rows = await db.selectFrom('idempotency_records').select(['idempotency_key', 'response_body']).orderBy('idempotency_key').execute();
      expect(JSON.parse(rows[0]!.response_body)).toEqual({ ...endpoint, secret: null, secret_note: expect.stringContaining('shown only once') });
      expect(rows[0]!.response_body).not.toContain(secret.slice('whsec_'.length, 30));
      expect(JSON.parse(rows[1]!.response_body)).toEqual({ id: 'lead_1', note: 'whsec_ is only text here' });
    } finally {
      await remove();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem, send } from '../helpers/http.js';
import { auditEvents } from '../guarantees/support.js';
import { must } from '../api/support.js';
import { webhookConfig } from './support.js';

// Issue 32, point 4: the webhook endpoints API as other tooling relies on it: the 201 shape with the secret
// shown once, list/get/patch/delete, rotation, scopes, validation, the private-address refusal at creation,
// idempotent replays, and an audit entry for every write, with the key that made it.

type Endpoint = { id: string; object: string; url: string; events: string[]; enabled: boolean; description: string | null; secret?: string; disabled_reason: string | null; previous_secret_expires_at: string | null };

describe('webhook endpoints API', () => {
  let t: TestApp;
  let tenant: Tenant;
  const url = 'https://1.1.1.1/hooks';

  beforeAll(async () => {
    // Receivers on private addresses are refused here (the default), and no runner sends anything.
    t = await createTestApp({ webhooks: { ...webhookConfig().webhooks, allowPrivateHosts: false } }, { replyWorker: false });
    tenant = await t.tenant();
  });
  afterAll(async () => t.close());

  it('creates an endpoint: 201 with its secret shown once, then read, listed, updated and deleted without it', async () => {
    const response = await tenant.request('POST', '/api/v1/webhook_endpoints', { url, events: ['lead.created', 'lead.updated'], description: 'CRM' });
    expect(response.statusCode, response.body).toBe(201);
    const created = response.json<Endpoint>();
    expect(created).toMatchObject({ object: 'webhook_endpoint', url, events: ['lead.created', 'lead.updated'], enabled: true, description: 'CRM', disabled_reason: null });
    expect(created.id).toMatch(/^whk_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(created.secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(response.headers.location).toBe(`/api/v1/webhook_endpoints/${created.id}`);

    const read = await must<Endpoint>(tenant.request('GET', `/api/v1/webhook_endpoints/${created.id}`), 200);
    const { secret: _secret, ...withoutSecret } = created;
    expect(read).toEqual(withoutSecret);
    const list = await must<{ data: Endpoint[] }>(tenant.request('GET', '/api/v1/webhook_endpoints'), 200);
    expect(list.data.find((item) => item.id === created.id)).toEqual(withoutSecret);
    expect(JSON.stringify(list)).not.toContain('whsec_');

    const patched = await must<Endpoint>(tenant.request('PATCH', `/api/v1/webhook_endpoints/${created.id}`, { events: ['*'], enabled: false, description: null }), 200);
    expect(patched).toMatchObject({ events: ['*'], enabled: false, description: null, disabled_reason: null });
    expect(patched.secret).toBeUndefined();

    const rotated = await must<Endpoint>(tenant.request('POST', `/api/v1/webhook_endpoints/${created.id}/rotate_secret`), 200);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.previous_secret_expires_at!) - Date.now()).toBeGreaterThan(23 * 3600_000);

    expect((await tenant.request('DELETE', `/api/v1/webhook_endpoints/${created.id}`)).statusCode).toBe(204);
    expectProblem(await tenant.request('GET', `/api/v1/webhook_endpoints/${created.id}`), 404, 'not_found');
  });

  it('audits every write with the key that made it, never with the secret', async () => {
    const created = await must<Endpoint>(tenant.request('POST', '/api/v1/webhook_endpoints', { url, events: ['*'] }), 201);
    await must(tenant.request('PATCH', `/api/v1/webhook_endpoints/${created.id}`, { url: 'https://1.0.0.1/other' }), 200);
    await must(tenant.request('POST', `/api/v1/webhook_endpoints/${created.id}/rotate_secret`), 200);
    const events = (await auditEvents(t.app, tenant.workspaceId)).filter((event) => event.target.id === created.id);
    expect(events.map((event) => event.action).reverse()).toEqual(['webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.secret_rotated']);
    for (const event of events) expect(event.actor).toMatchObject({ type: 'api_key', id: tenant.keyId });
    expect(events.find((event) => event.action === 'webhook_endpoint.updated')!.changes).toEqual({ url: { before: url, after: 'https://1.0.0.1/other' } });
    expect(JSON.stringify(events)).not.toContain('whsec_');
  });

  it('replays a create with the same Idempotency-Key: one endpoint, the same answer without the secret (shown once)', async () => {
    const headers = { 'idempotency-key': 'create-webhook-1' };
    const first = await tenant.request('POST', '/api/v1/webhook_endpoints', { url, events: ['lead.created'] }, headers);
    const second = await tenant.request('POST', '/api/v1/webhook_endpoints', { url, events: ['lead.created'] }, headers);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const { secret, ...rest } = first.json<Endpoint>();
    expect(secret).toMatch(/^whsec_/);
    expect(second.json()).toEqual({ ...rest, secret: null, secret_note: expect.stringContaining('shown only once') });
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.headers.etag).toBe(first.headers.etag);
    const audited = (await auditEvents(t.app, tenant.workspaceId)).filter((event) => event.target.id === first.json<Endpoint>().id);
    expect(audited).toHaveLength(1);
    expect(audited[0]!.idempotency_key).toBe('create-webhook-1');
  });

  it('requires webhooks:read to read and webhooks:write to write (403 naming the scope)', async () => {
    const created = await must<Endpoint>(tenant.request('POST', '/api/v1/webhook_endpoints', { url, events: ['*'] }), 201);
    const reader = await tenant.newKey(['webhooks:read']);
    const other = await tenant.newKey(['leads:read', 'leads:write']);
    expect((await send(t.app, reader.key, 'GET', `/api/v1/webhook_endpoints/${created.id}/deliveries`)).statusCode).toBe(200);
    for (const [method, path] of [['POST', '/api/v1/webhook_endpoints'], ['PATCH', `/api/v1/webhook_endpoints/${created.id}`], ['DELETE', `/api/v1/webhook_endpoints/${created.id}`], ['POST', `/api/v1/webhook_endpoints/${created.id}/test`], ['POST', `/api/v1/webhook_endpoints/${created.id}/rotate_secret`]] as const) {
      const problem = expectProblem(await send(t.app, reader.key, method, path, method === 'DELETE' || path.endsWith('t') ? undefined : { url, events: ['*'] }), 403, 'insufficient_scope');
      expect(problem.required_scope).toBe('webhooks:write');
    }
    expect(expectProblem(await send(t.app, other.key, 'GET', '/api/v1/webhook_endpoints'), 403, 'insufficient_scope').required_scope).toBe('webhooks:read');
  });

  it.each([
    ['a scheme other than http(s)', { url: 'ftp://1.1.1.1/x', events: ['*'] }, '/url'],
    ['credentials in the URL', { url: 'https://user:pass@1.1.1.1/x', events: ['*'] }, '/url'],
    ['an unknown event type', { url, events: ['lead.deleted'] }, '/events/0'],
    ['no event type', { url, events: [] }, '/events'],
    ['a field that does not exist', { url, events: ['*'], secret: 'whsec_abc' }, '/secret'],
    ['a loopback address', { url: 'http://127.0.0.1:9/x', events: ['*'] }, '/url'],
    ['a private address', { url: 'https://10.1.2.3/x', events: ['*'] }, '/url'],
    ['a name that resolves to loopback', { url: 'http://localhost:9/x', events: ['*'] }, '/url'],
  ])('refuses %s with 400 naming the field', async (_label, body, pointer) => {
    const problem = expectProblem(await tenant.request('POST', '/api/v1/webhook_endpoints', body), 400);
    expect(problem.errors?.map((error) => error.pointer)).toContain(pointer);
  });

  it('refuses a private address on update too, and answers 404 for an id of another workspace or shape', async () => {
    const created = await must<Endpoint>(tenant.request('POST', '/api/v1/webhook_endpoints', { url, events: ['*'] }), 201);
    expectProblem(await tenant.request('PATCH', `/api/v1/webhook_endpoints/${created.id}`, { url: 'http://192.168.1.1/x' }), 400, 'validation_failed');
    const stranger = await t.tenant();
    expectProblem(await stranger.request('GET', `/api/v1/webhook_endpoints/${created.id}`), 404, 'not_found');
    expectProblem(await stranger.request('DELETE', `/api/v1/webhook_endpoints/${created.id}`), 404, 'not_found');
    expectProblem(await tenant.request('GET', '/api/v1/webhook_endpoints/whk_nope'), 404, 'not_found');
    expectProblem(await tenant.request('POST', `/api/v1/webhook_endpoints/${created.id}/deliveries/whmsg_nope/resend`), 404, 'not_found');
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/events/writer.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { auditEvents } from '../guarantees/support.js';
import { must } from '../api/support.js';
import { eventually, makeActiveChatbot, startConversation, widget } from '../runtime/support.js';
import { startReceiver, verified, webhookConfig, type Answer, type Receiver, type Received } from './support.js';

// Issue 32, point 4 and its acceptance: deliveries per Standard Webhooks against a real receiver that
// verifies every signature with the `standardwebhooks` package: every event type arrives signed; failures
// are retried with the same webhook-id; 410 disables the endpoint; a rotated secret and the previous one
// both verify during the overlap; redirects are not followed; the private-address guard applies again
// when sending.

type Endpoint = { id: string; secret: string; enabled: boolean; disabled_reason: string | null; failing_since: string | null };
type Delivery = { id: string; status: string; attempts: number; event_type: string; attempt_log: { status_code: number | null; error: string | null; next_retry_at: string | null; attempted_at: string; response_excerpt: string | null; latency_ms: number }[] };

describe('webhook deliveries', () => {
  let t: TestApp;
  let tenant: Tenant;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    t = await createTestApp(webhookConfig());
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });
  afterAll(async () => t.close());

  async function receiver(answer?: (request: Received, index: number) => Answer): Promise<Receiver> {
    const started = await startReceiver(answer);
    receivers.push(started);
    return started;
  }

  async function endpoint(who: Tenant, url: string, events: string[] = ['*']): Promise<Endpoint> {
    return must<Endpoint>(who.request('POST', '/api/v1/webhook_endpoints', { url, events }), 201);
  }

  const deliveries = (who: Tenant, id: string) => must<{ data: Delivery[] }>(who.request('GET', `/api/v1/webhook_endpoints/${id}/deliveries?limit=100`), 200);

  it('delivers every event type, each signed: the standardwebhooks package verifies them all', async () => {
    tenant = await t.tenant();
    const hook = await receiver();
    const target = await endpoint(tenant, hook.url);

    // Each type produced the way people produce it: the API, the widget, an operator.
    const bot = await makeActiveChatbot(tenant, { name: 'Front desk' }); // chatbot.created, chatbot.updated
    await must(tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'text', title: 'Hours', content: 'We open at nine.' }), 201); // source.synced
    const conversation = await startConversation(t.app, bot.id); // conversation.created
    const sent = await widget(t.app, 'POST', `/widget/v1/conversations/${conversation.conversation_id}/messages`, { token: conversation.visitor_token, body: { content: 'When do you open?' } });
    expect(sent.statusCode, sent.body).toBe(201); // message.created (question and answer)
    await must(tenant.request('POST', `/api/v1/conversations/${conversation.conversation_id}/messages`, { role: 'operator', content: 'A person here.' }), 201); // conversation.updated
    const lead = await must<{ id: string }>(tenant.request('POST', '/api/v1/leads', { email: 'ada@example.com' }), 201); // lead.created
    await must(tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'contacted' }), 200); // lead.updated
    await must(tenant.request('POST', `/api/v1/webhook_endpoints/${target.id}/test`), 202); // webhook.test

    const { data: events } = await must<{ data: { id: string; type: string }[] }>(tenant.request('GET', '/api/v1/events?limit=100'), 200);
    const arrived = await hook.waitFor(events.length + 1);
    const payloads = arrived.map((request) => verified(target.secret, request));
    expect(new Set(payloads.map((payload) => payload.type))).toEqual(new Set([...EVENT_TYPES, 'webhook.test']));
    for (const request of arrived) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toMatch(/^ChatAgentWebhooks\/1\.0/);
      expect(request.headers['webhook-id']).toMatch(/^whmsg_/);
    }
    // Each event once, with the resource as the events API shows it.
    const lead1 = payloads.find((payload) => payload.type === 'lead.created')!;
    expect(lead1.data).toMatchObject({ id: lead.id, object: 'lead' });
    expect(new Set(arrived.map((request) => request.headers['webhook-id'])).size).toBe(arrived.length);
    // A wrong secret does not verify.
    expect(() => verified('whsec_' + Buffer.alloc(32, 7).toString('base64'), arrived[0]!)).toThrow();
  });

  it('sends only the subscribed types, and nothing for another workspace\'s events', async () => {
    tenant = await t.tenant();
    const stranger = await t.tenant();
    const hook = await receiver();
    const target = await endpoint(tenant, hook.url, ['lead.updated']);
    const lead = await must<{ id: string }>(tenant.request('POST', '/api/v1/leads', { email: 'bea@example.com' }), 201);
    await must(stranger.request('POST', '/api/v1/leads', { email: 'cy@example.com' }), 201);
    await must(tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'contacted' }), 200);
    const [only] = await hook.waitFor(1);
    expect(verified(target.secret, only!)).toMatchObject({ type: 'lead.updated', data: { id: lead.id, status: 'contacted' } });
    const page = await deliveries(tenant, target.id);
    expect(page.data.map((delivery) => delivery.event_type)).toEqual(['lead.updated']);
  });

  it('retries a failure with the same webhook-id: 500, 500, then 200 arrive as three tries of one delivery', async () => {
    tenant = await t.tenant();
    const hook = await receiver((_request, index) => (index < 2 ? { status: 500, body: 'try again' } : { status: 200, body: 'ok' }));
    const target = await endpoint(tenant, hook.url, ['lead.created']);
    await must(tenant.request('POST', '/api/v1/leads', { email: 'dee@example.com' }), 201);
    const tries = await hook.waitFor(3);
    expect(new Set(tries.map((request) => request.headers['webhook-id'])).size).toBe(1);
    expect(new Set(tries.map((request) => request.body)).size).toBe(1);
    for (const request of tries) verified(target.secret, request);

    const delivery = await eventually(async () => (await deliveries(tenant, target.id)).data.find((item) => item.status === 'succeeded'));
    expect(delivery.id).toBe(tries[0]!.headers['webhook-id']);
    expect(delivery.attempt_log.map((attempt) => attempt.status_code)).toEqual([500, 500, 200]);
    expect(delivery.attempt_log.map((attempt) => attempt.response_excerpt)).toEqual(['try again', 'try again', 'ok']);
    expect(delivery.attempt_log[0]!.next_retry_at).not.toBeNull();
    expect(delivery.attempt_log[2]!.next_retry_at).toBeNull();
    const current = await must<Endpoint>(tenant.request('GET', `/api/v1/webhook_endpoints/${target.id}`), 200);
    expect(current.failing_since).toBeNull(); // cleared by the success
  });

  it('gives up after the schedule: 1 + WEBHOOK_RETRY_SCHEDULE attempts, then failed; a resend sends it again with the same id', async () => {
    tenant = await t.tenant();
    let healthy = false;
    const hook = await receiver(() => (healthy ? { status: 204 } : { status: 502 }));
    const target = await endpoint(tenant, hook.url, ['lead.created']);
    await must(tenant.request('POST', '/api/v1/leads', { email: 'eve@example.com' }), 201);
    const failed = await eventually(async () => (await deliveries(tenant, target.id)).data.find((item) => item.status === 'failed'));
    expect(failed.attempt_log).toHaveLength(4);
    expect(hook.received).toHaveLength(4);
    expect((await must<Endpoint>(tenant.request('GET', `/api/v1/webhook_endpoints/${target.id}`), 200)).failing_since).not.toBeNull();

    healthy = true;
    const resent = await must<Delivery>(tenant.request('POST', `/api/v1/webhook_endpoints/${target.id}/deliveries/${failed.id}/resend`), 202);
    expect(resent).toMatchObject({ id: failed.id, status: 'pending' });
    const all = await hook.waitFor(5);
    expect(all[4]!.headers['webhook-id']).toBe(failed.id);
    await eventually(async () => (await deliveries(tenant, target.id)).data.find((item) => item.status === 'succeeded'));
  });

  it('disables the endpoint on 410 Gone, tells its owners in the audit log, and sends it nothing more', async () => {
    tenant = await t.tenant();
    const hook = await receiver(() => ({ status: 410 }));
    const target = await endpoint(tenant, hook.url, ['lead.created']);
    await must(tenant.request('POST', '/api/v1/leads', { email: 'fay@example.com' }), 201);
    await hook.waitFor(1);
    const disabled = await eventually(async () => {
      const current = await must<Endpoint>(tenant.request('GET', `/api/v1/webhook_endpoints/${target.id}`), 200);
      return current.enabled ? undefined : current;
    });
    expect(disabled.disabled_reason).toBe('gone');
    const audit = (await auditEvents(t.app, tenant.workspaceId)).find((event) => event.action === 'webhook_endpoint.disabled');
    expect(audit).toMatchObject({ target: { type: 'webhook_endpoint', id: target.id }, actor: { type: 'system' }, changes: { disabled_reason: { before: null, after: 'gone' } } });
    const [delivery] = (await deliveries(tenant, target.id)).data;
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1 });

    await must(tenant.request('POST', '/api/v1/leads', { email: 'gus@example.com' }), 201);
    expect((await deliveries(tenant, target.id)).data).toHaveLength(1); // nothing queued for a disabled endpoint
    // Enabled again by a person: the reason goes.
    const enabled = await must<Endpoint>(tenant.request('PATCH', `/api/v1/webhook_endpoints/${target.id}`, { enabled: true }), 200);
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  });

  it('disables an endpoint whose deliveries have failed for days once a delivery exhausts its retries', async () => {
    tenant = await t.tenant();
    const hook = await receiver(() => ({ status: 500 }));
    const target = await endpoint(tenant, hook.url, ['lead.created']);
    // Failing for six days already (as if every delivery since then had failed).
    const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3600_000).toISOString();
    await t.app.database.db.updateTable('webhook_endpoints').set({ failing_since: sixDaysAgo }).where('id', '=', target.id).execute();
    await must(tenant.request('POST', '/api/v1/leads', { email: 'ida@example.com' }), 201);
    const disabled = await eventually(async () => {
      const current = await must<Endpoint>(tenant.request('GET', `/api/v1/webhook_endpoints/${target.id}`), 200);
      return current.enabled ? undefined : current;
    });
    expect(disabled).toMatchObject({ disabled_reason: 'failing', failing_since: sixDaysAgo });
    expect(hook.received).toHaveLength(4); // not before the last retry
    const audit = (await auditEvents(t.app, tenant.workspaceId)).find((event) => event.action === 'webhook_endpoint.disabled');
    expect(audit).toMatchObject({ target: { id: target.id }, changes: { disabled_reason: { after: 'failing' } } });
  });

  it('honours Retry-After on 429: the next attempt is due no sooner than it asks', async () => {
    tenant = await t.tenant();
    const hook = await receiver((_request, index) => (index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const target = await endpoint(tenant, hook.url, ['lead.created']);
    await must(tenant.request('POST', '/api/v1/leads', { email: 'hal@example.com' }), 201);
    const delivered = await eventually(async () => (await deliveries(tenant, target.id)).data.find((item) => item.status === 'succeeded'));
    const [first, second] = delivered.attempt_log;
    expect(first!.status_code).toBe(429);
    expect(Date.parse(first!.next_retry_at!) - Date.parse(first!.attempted_at)).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(second!.attempted_at)).toBeGreaterThanOrEqual(Date.parse(first!.next_retry_at!));
  });

  it('keeps both secrets valid during a rotation\'s overlap: each verifies the same delivery', async () => {
    tenant = await t.tenant();
    const hook = await receiver();
    const target = await endpoint(tenant, hook.url);
    const rotated = await must<Endpoint>(tenant.request('POST', `/api/v1/webhook_endpoints/${target.id}/rotate_secret`), 200);
    await must(tenant.request('POST', `/api/v1/webhook_endpoints/${target.id}/test`), 202);
    const [request] = await hook.waitFor(1);
    expect(String(request!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(rotated.secret, request!)).toMatchObject({ type: 'webhook.test' });
    expect(verified(target.secret, request!)).toMatchObject({ type: 'webhook.test' });
  });

  it('does not follow redirects, and times out a receiver that does not answer (both retried)', async () => {
    tenant = await t.tenant();
    const elsewhere = await receiver();
    const hook = await receiver((_request, index) => (index === 0 ? { status: 302, headers: { location: elsewhere.url } } : index === 1 ? 'hang' : { status: 200 }));
    const target = await endpoint(tenant, hook.url, ['lead.created']);
    await must(tenant.request('POST', '/api/v1/leads', { email: 'ivy@example.com' }), 201);
    const delivered = await eventually(async () => (await deliveries(tenant, target.id)).data.find((item) => item.status === 'succeeded'));
    expect(delivered.attempt_log.map((attempt) => attempt.status_code)).toEqual([302, null, 200]);
    expect(delivered.attempt_log[1]!.error).toMatch(/no answer within 2 s/);
    expect(elsewhere.received).toHaveLength(0);
  });
});

describe('webhook deliveries when private addresses are not allowed', () => {
  it('refuses to send to a receiver that resolves to a private address at delivery time (DNS may have changed)', async () => {
    const t = await createTestApp({ webhooks: { ...webhookConfig().webhooks, allowPrivateHosts: false }, runtime: webhookConfig().runtime });
    const hook = await startReceiver();
    try {
      const tenant = await t.tenant();
      // Created while its name pointed elsewhere: the row is written as the API would have, the address check aside.
      const created = await must<Endpoint>(tenant.request('POST', '/api/v1/webhook_endpoints', { url: 'https://1.1.1.1/hooks', events: ['*'] }), 201);
      await t.app.database.db.updateTable('webhook_endpoints').set({ url: hook.url }).where('id', '=', created.id).execute();
      await must(tenant.request('POST', `/api/v1/webhook_endpoints/${created.id}/test`), 202);
      const tried = await eventually(async () => {
        const page = await must<{ data: Delivery[] }>(tenant.request('GET', `/api/v1/webhook_endpoints/${created.id}/deliveries`), 200);
        return page.data[0]?.attempt_log[0];
      });
      expect(tried.status_code).toBeNull();
      expect(tried.error).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
      expect(hook.received).toHaveLength(0);
    } finally {
      await hook.close();
      await t.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeActiveChatbot, startConversation, widget } from '../runtime/support.js';
import { upload, waitForStatus } from '../sources/support.js';
import { expectProblem, must } from './support.js';

// Issue 32 point 1 and 3: every change that matters outside its request is an event written with the change,
// carrying the resource as the API presents it, and GET /api/v1/events lets an integrator catch up: oldest
// first, in commit order, filtered by type and time, with a cursor that also resumes after the last page.

type Event = { id: string; object: string; type: string; created_at: string; workspace_id: string; data: Record<string, unknown> & { id: string } };
type EventPage = { object: 'list'; data: Event[]; has_more: boolean; next_cursor: string | null };

describe('GET /api/v1/events', () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    other = await t.tenant();
  });
  afterAll(async () => t.close());

  const events = (query = '', who: Tenant = tenant) => must<EventPage>(who.request('GET', `/api/v1/events${query}`), 200);

  /** Every event of the tenant after `cursor` (all pages), and the cursor to resume from. */
  async function drain(cursor: string | null, query = ''): Promise<{ events: Event[]; cursor: string | null }> {
    const seen: Event[] = [];
    let next = cursor;
    for (;;) {
      const page = await events(`?limit=3${query}${next ? `&cursor=${next}` : ''}`);
      seen.push(...page.data);
      if (page.next_cursor) next = page.next_cursor;
      if (!page.has_more) return { events: seen, cursor: next };
    }
  }

  it('records each change as it is committed, with the resource as the API presents it, oldest first', async () => {
    const start = await drain(null);
    expect(start.events).toEqual([]);
    expect(start.cursor).toBeNull();

    const bot = await makeActiveChatbot(tenant, { name: 'Front desk' });
    const source = await must<{ id: string }>(tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'text', title: 'Hours', content: 'We open at nine every day.' }), 201);
    const conversation = await startConversation(t.app, bot.id);
    const sent = await widget(t.app, 'POST', `/widget/v1/conversations/${conversation.conversation_id}/messages`, { token: conversation.visitor_token, body: { content: 'When do you open?' } });
    expect(sent.statusCode, sent.body).toBe(201);
    await must(tenant.request('POST', `/api/v1/conversations/${conversation.conversation_id}/messages`, { role: 'operator', content: 'A person here: we open at nine.' }), 201);
    const lead = await must<{ id: string }>(tenant.request('POST', '/api/v1/leads', { email: 'ada@example.com', conversation_id: conversation.conversation_id }), 201);
    await must(tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'contacted' }), 200);

    const { events: all, cursor } = await drain(null);
    expect(all.map((event) => event.type)).toEqual([
      'chatbot.created',
      'chatbot.updated', // published
      'source.synced', // a text source is ready in its own request
      'conversation.created',
      'message.created', // the visitor's question
      'message.created', // the agent's answer
      'message.created', // the operator's message...
      'conversation.updated', // ...which takes the conversation over (mode human)
      'lead.created',
      'lead.updated',
    ]);
    for (const event of all) {
      expect(event).toMatchObject({ object: 'event', workspace_id: tenant.workspaceId });
      expect(event.id).toMatch(/^ev_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
    expect([...all.map((event) => event.created_at)].sort()).toEqual(all.map((event) => event.created_at));

    // The resource as GET presents it (at the time of the change).
    const byType = (type: string) => all.filter((event) => event.type === type);
    expect(byType('chatbot.updated')[0]!.data).toEqual(await must(tenant.request('GET', `/api/v1/chatbots/${bot.id}`), 200));
    expect(byType('source.synced')[0]!.data).toMatchObject({ id: source.id, object: 'source', status: 'ready' });
    const messages = await must<{ data: unknown[] }>(tenant.request('GET', `/api/v1/conversations/${conversation.conversation_id}/messages?limit=10`), 200);
    expect(byType('message.created').map((event) => event.data)).toEqual(expect.arrayContaining(messages.data));
    expect(byType('message.created').map((event) => event.data.role)).toEqual(['user', 'assistant', 'operator']);
    expect(byType('conversation.updated')[0]!.data).toMatchObject({ id: conversation.conversation_id, mode: 'human' });
    expect(byType('lead.updated')[0]!.data).toEqual(await must(tenant.request('GET', `/api/v1/leads/${lead.id}`), 200));

    // Another workspace sees none of them.
    expect((await events('', other)).data).toEqual([]);

    // The cursor of the last page resumes: nothing until the next change, then exactly it.
    expect(cursor).not.toBeNull();
    expect((await drain(cursor)).events).toEqual([]);
    await t.app.services.conversations.close(systemContext(tenant.workspaceId, 'test'), conversation.conversation_id);
    const later = await drain(cursor);
    expect(later.events.map((event) => [event.type, event.data.status])).toEqual([['conversation.updated', 'closed']]);
  });

  it('tells when the job runner has synced a file source, with the source as it settled', async () => {
    const before = (await drain(null, '&type=source.synced')).cursor;
    const bot = await makeActiveChatbot(tenant);
    const response = await upload(t.app, tenant, bot.id, { name: 'returns.md', type: 'text/markdown', bytes: '# Returns\n\nUnworn shoes can be returned within 45 days.\n' });
    expect(response.statusCode, response.body).toBe(201);
    const settled = await waitForStatus(tenant, bot.id, response.json().id, ['ready', 'failed']);
    const synced = (await drain(before, '&type=source.synced')).events;
    expect(synced.map((event) => event.data)).toEqual([settled]);
  });

  it('writes no event for a refused write, and one for an idempotent write however often it is replayed', async () => {
    const before = (await drain(null)).cursor;
    expect((await tenant.request('POST', '/api/v1/leads', { name: 'No contact' })).statusCode).toBe(400);
    const headers = { 'idempotency-key': `events-${Date.now()}` };
    for (let i = 0; i < 3; i++) expect((await tenant.request('POST', '/api/v1/leads', { email: 'grace@example.com' }, headers)).statusCode).toBe(201);
    const added = (await drain(before)).events;
    expect(added.map((event) => [event.type, event.data.email])).toEqual([['lead.created', 'grace@example.com']]);
  });

  it('filters by type and creation time, and refuses an unknown type or a bad cursor', async () => {
    const leads = (await drain(null, '&type=lead.updated,lead.created')).events;
    expect(leads.length).toBeGreaterThanOrEqual(3);
    expect(new Set(leads.map((event) => event.type))).toEqual(new Set(['lead.created', 'lead.updated']));
    const all = (await drain(null)).events;
    const middle = all[Math.floor(all.length / 2)]!;
    const after = (await drain(null, `&created_after=${encodeURIComponent(middle.created_at)}`)).events;
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((event) => event.created_at > middle.created_at)).toBe(true);

    expectProblem(await tenant.request('GET', '/api/v1/events?type=lead.deleted'), 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/events?type=DROP%20TABLE'), 400, 'validation_failed');
    const page = await events('?limit=1');
    expectProblem(await tenant.request('GET', `/api/v1/events?limit=1&type=lead.created&cursor=${page.next_cursor}`), 400, 'invalid_cursor');
  });

  it('needs the events:read scope', async () => {
    const { key } = await tenant.newKey(['leads:read']);
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: { authorization: `Bearer ${key}` } });
    expectProblem(response, 403, 'insufficient_scope');
  });
});

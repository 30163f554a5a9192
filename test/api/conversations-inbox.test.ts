import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem, must, testClock } from './support.js';

// The inbox's reading of conversations (issue 33 §6): who the visitor is, the newest message, full-text
// search over messages and the list's filters, through GET /api/v1/conversations on a real database.

const clock = testClock();
let t: TestApp;
let tenant: Tenant;
let other: Tenant;

const MINUTE = 60_000;
const T0 = Date.parse('2026-03-01T09:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * MINUTE).toISOString();

type ConversationBody = {
  id: string;
  visitor: { id: string; name: string | null; email: string | null };
  last_message: { role: string; content: string; created_at: string } | null;
};
const ids = (body: { data: { id: string }[] }) => body.data.map((item) => item.id);

async function list(query: string): Promise<string[]> {
  const response = await tenant.request('GET', `/api/v1/conversations${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return ids(response.json());
}

const data = {} as { bot: string; other: string; lead: ConversationBody; given: ConversationBody; quiet: ConversationBody; human: ConversationBody; waiting: ConversationBody; longText: string };

beforeAll(async () => {
  t = await createTestApp({}, { clock, replyWorker: false }); // no agent answers appear in the background
  tenant = await t.tenant();
  other = await t.tenant();
  const ctx = systemContext(tenant.workspaceId, 'test');
  const { conversations, messages } = t.app.services;
  clock.set(at(0));
  data.bot = (await makeChatbot(tenant, { name: 'Sales' })).id;
  await must(tenant.request('PATCH', `/api/v1/chatbots/${data.bot}`, { status: 'active' }), 200);
  data.other = (await makeChatbot(tenant, { name: 'Support' })).id;
  await must(tenant.request('PATCH', `/api/v1/chatbots/${data.other}`, { status: 'active' }), 200);

  // A visitor who left a lead (the lead's details win over the name given at the start).
  clock.set(at(10));
  const lead = await conversations.start(ctx, { chatbotId: data.bot, channel: 'widget', visitor: { name: 'Started as' } });
  await messages.send(ctx, lead.id, { content: 'Where is my REFUND for order 42?' });
  data.longText = `Thanks, ${'é'.repeat(250)} end`;
  clock.set(at(11));
  await messages.send(ctx, lead.id, { content: data.longText, role: 'operator' });
  await must(tenant.request('POST', '/api/v1/leads', { conversation_id: lead.id, name: 'Grace Hopper', email: 'Grace@Example.com', company: 'Navy' }), 201);

  // A visitor who gave an email only when the conversation started.
  clock.set(at(20));
  const given = await conversations.start(ctx, { chatbotId: data.other, channel: 'api', visitor: { email: 'given@example.com' } });
  await messages.send(ctx, given.id, { content: 'Do you ship to Lisbon? 100% sure_thing' });

  // Nobody known, no message.
  clock.set(at(30));
  const quiet = await conversations.start(ctx, { chatbotId: data.bot, channel: 'dashboard' });

  // A visitor waiting for a person, and one an operator took over (then closed).
  clock.set(at(40));
  const waiting = await conversations.start(ctx, { chatbotId: data.bot, channel: 'widget' });
  await messages.send(ctx, waiting.id, { content: 'I want to talk to a human about my refund' });
  await t.app.database.db.updateTable('conversations').set({ handoff_requested_at: at(41) }).where('id', '=', waiting.id).execute();
  clock.set(at(50));
  const human = await conversations.start(ctx, { chatbotId: data.other, channel: 'widget' });
  await messages.send(ctx, human.id, { content: 'An operator answers here', role: 'operator' });
  await conversations.close(ctx, human.id);

  // Another workspace with the same words: never listed.
  const otherBot = (await makeChatbot(other)).id;
  await must(other.request('PATCH', `/api/v1/chatbots/${otherBot}`, { status: 'active' }), 200);
  const foreign = await conversations.start(systemContext(other.workspaceId, 'test'), { chatbotId: otherBot, channel: 'widget' });
  await messages.send(systemContext(other.workspaceId, 'test'), foreign.id, { content: 'refund refund REFUND' });

  const read = async (id: string) => (await must<ConversationBody>(tenant.request('GET', `/api/v1/conversations/${id}`), 200));
  Object.assign(data, { lead: await read(lead.id), given: await read(given.id), quiet: await read(quiet.id), waiting: await read(waiting.id), human: await read(human.id) });
});
afterAll(() => t?.close());

describe('who the visitor is and the newest message', () => {
  it('shows the captured lead\'s name and email, else what the visitor gave, else nulls', () => {
    expect(data.lead.visitor).toMatchObject({ name: 'Grace Hopper', email: 'grace@example.com' });
    expect(data.given.visitor).toMatchObject({ name: null, email: 'given@example.com' });
    expect(data.quiet.visitor).toMatchObject({ name: null, email: null });
  });

  it('carries the newest message, its first 200 characters, or null before the first one', () => {
    expect(data.lead.last_message).toEqual({ role: 'operator', content: data.longText.slice(0, 200), created_at: at(11) });
    expect(data.lead.last_message!.content).toHaveLength(200);
    expect(data.given.last_message).toMatchObject({ role: 'user', content: 'Do you ship to Lisbon? 100% sure_thing' });
    expect(data.quiet.last_message).toBeNull();
  });

  it('the list presents every row the same way as the read', async () => {
    const response = await must<{ data: ConversationBody[] }>(tenant.request('GET', '/api/v1/conversations?limit=100'), 200);
    expect(response.data).toHaveLength(5);
    for (const read of [data.lead, data.given, data.quiet, data.waiting, data.human]) expect(response.data.find((c) => c.id === read.id)).toEqual(read);
  });

  it('moves the ETag when the lead changes, so a conditional read sees the new name', async () => {
    const first = await tenant.request('GET', `/api/v1/conversations/${data.lead.id}`);
    const lead = (await must<{ data: { id: string }[] }>(tenant.request('GET', `/api/v1/leads?conversation_id=${data.lead.id}`), 200)).data[0]!;
    clock.set(at(60));
    await must(tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { name: 'Admiral Hopper' }), 200);
    const again = await tenant.request('GET', `/api/v1/conversations/${data.lead.id}`, undefined, { 'if-none-match': String(first.headers.etag) });
    expect(again.statusCode).toBe(200);
    expect(again.json().visitor.name).toBe('Admiral Hopper');
  });
});

describe('search over messages (q)', () => {
  it('finds conversations with a message containing every word, case-insensitively, in this workspace only', async () => {
    expect(await list('?q=refund')).toEqual([data.waiting.id, data.lead.id]);
    expect(await list('?q=ORDER%20refund')).toEqual([data.lead.id]);
    expect(await list('?q=refund%20banana')).toEqual([]);
    expect(await list('?q=lisbon')).toEqual([data.given.id]);
  });

  it('reads LIKE wildcards literally', async () => {
    expect(await list('?q=100%25')).toEqual([data.given.id]);
    expect(await list('?q=%25')).toEqual([data.given.id]);
    expect(await list('?q=r_e')).toEqual([]); // as a wildcard, `_` would match "rde" of "order"
    expect(await list('?q=sure_thing')).toEqual([data.given.id]);
  });

  it('pages through the matches with the cursor', async () => {
    const first = await must<{ data: { id: string }[]; next_cursor: string }>(tenant.request('GET', '/api/v1/conversations?q=refund&limit=1'), 200);
    expect(ids(first)).toEqual([data.waiting.id]);
    const second = await must<{ data: { id: string }[]; next_cursor: string | null }>(tenant.request('GET', `/api/v1/conversations?q=refund&limit=1&cursor=${first.next_cursor}`), 200);
    expect(ids(second)).toEqual([data.lead.id]);
    // The cursor is bound to the search it was issued for.
    expectProblem(await tenant.request('GET', `/api/v1/conversations?q=lisbon&limit=1&cursor=${first.next_cursor}`), 400, 'invalid_cursor');
  });
});

describe('filters', () => {
  it('combines search with agent, status, mode, waiting for a person and creation time', async () => {
    expect(await list(`?chatbot_id=${data.other}`)).toEqual([data.human.id, data.given.id]);
    expect(await list('?status=closed')).toEqual([data.human.id]);
    expect(await list('?mode=human')).toEqual([data.human.id, data.lead.id]);
    expect(await list('?handoff=requested')).toEqual([data.waiting.id]);
    expect(await list('?handoff=requested&q=lisbon')).toEqual([]);
    expect(await list(`?created_after=${at(15)}&created_before=${at(45)}`)).toEqual([data.waiting.id, data.quiet.id, data.given.id]);
    expect(await list(`?q=refund&created_before=${at(15)}&chatbot_id=${data.bot}&mode=human`)).toEqual([data.lead.id]);
  });

  it('refuses a bad filter with 400 problem details naming it', async () => {
    for (const query of ['status=bogus', 'mode=robot', 'handoff=yes', 'created_after=yesterday', `q=${'x'.repeat(201)}`, 'q=a%20b%20c%20d%20e%20f%20g%20h%20i', 'colour=red']) {
      const problem = expectProblem(await tenant.request('GET', `/api/v1/conversations?${query}`), 400);
      expect(JSON.stringify(problem), query).toContain(query.split('=')[0]!);
    }
  });
});

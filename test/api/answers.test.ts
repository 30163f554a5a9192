import { systemContext } from '../../src/lib/actor.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplyEngine, ReplyOutput } from '../../src/modules/replies/engine.js';
import { normalizeQuestion } from '../../src/modules/analytics/unanswered.js';
import { rebuildDailyStats } from '../../src/modules/stats/rebuild.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { makeActiveChatbot, startConversation, widget } from '../runtime/support.js';
import { expectProblem, must } from './support.js';

// Issue 31 through /api/v1: the agent fields, the conversations waiting for a person, the unanswered
// questions and the answer figures of GET /analytics, against known traffic. The answers come from a
// scripted engine, so every outcome is known: "what is x" is not in the knowledge, "person" asks for one.

const SOURCE = { source_id: 'src_01ARZ3NDEKTSV4RRFFQ69G5FAV', document_id: 'doc_01ARZ3NDEKTSV4RRFFQ69G5FAV', title: 'Guide', url: 'https://example.com/guide' };
const scripted: ReplyEngine = {
  async reply(input): Promise<ReplyOutput> {
    const text = input.transcript.at(-1)!.content.toLowerCase();
    const base = { fallback: false, source: 'test', confidence: null };
    if (text.includes('what is x')) return { ...base, content: 'I do not know that.', sources: [], outcome: 'unanswered' };
    if (text.includes('person')) return { ...base, content: 'Someone will follow up here.', sources: [], outcome: 'handoff' };
    if (text.startsWith('hi')) return { ...base, content: 'Hello!', sources: [], outcome: 'conversational' };
    return { ...base, content: 'Here is the answer.', sources: [SOURCE], outcome: 'answered' };
  },
};

type Answers = { answered: number; unanswered: number; answer_rate: number | null; feedback_up: number; feedback_down: number; handoffs: number };
type Summary = { answers: Answers; daily: (Answers & { date: string })[] };

describe('agent fields: suggested_questions and language', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp({}, { replyEngine: scripted });
    tenant = await t.tenant();
  });
  afterAll(async () => t.close());

  it('defaults to [] and auto; set on create and update, audited', async () => {
    const plain = await makeChatbot(tenant);
    expect(plain).toMatchObject({ suggested_questions: [], language: 'auto' });
    const bot = await makeChatbot(tenant, { suggested_questions: ['Where are you?'], language: 'es' });
    expect(bot).toMatchObject({ suggested_questions: ['Where are you?'], language: 'es' });
    const patched = await must(tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { suggested_questions: ['A?', 'B?'], language: 'fr' }), 200);
    expect(patched).toMatchObject({ suggested_questions: ['A?', 'B?'], language: 'fr' });
    expect(await must(tenant.request('GET', `/api/v1/chatbots/${bot.id}`), 200)).toMatchObject({ suggested_questions: ['A?', 'B?'], language: 'fr' });
    const event = await t.app.database.db
      .selectFrom('audit_events')
      .select('changes')
      .where('workspace_id', '=', tenant.workspaceId)
      .where('target_id', '=', bot.id)
      .where('action', '=', 'chatbot.updated')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(event.changes)).toMatchObject({
      suggested_questions: { before: ['Where are you?'], after: ['A?', 'B?'] },
      language: { before: 'es', after: 'fr' },
    });
  });

  it('refuses 7 questions, an empty or a 201-character question, and an unknown language: 400', async () => {
    const seven = Array.from({ length: 7 }, (_, i) => `Question ${i}?`);
    expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'A', suggested_questions: seven }), 400, 'validation_failed');
    expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'A', suggested_questions: [''] }), 400, 'validation_failed');
    expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'A', suggested_questions: ['x'.repeat(201)] }), 400, 'validation_failed');
    expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'A', language: 'it' }), 400, 'validation_failed');
    const bot = await makeChatbot(tenant, { suggested_questions: seven.slice(0, 6) });
    expect(bot.suggested_questions).toHaveLength(6);
    expectProblem(await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { suggested_questions: seven }), 400, 'validation_failed');
    expectProblem(await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { language: null }), 400, 'validation_failed');
  });
});

describe('handoffs, unanswered questions and answer figures against known traffic', () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  let a: { id: string; name: string };
  let b: { id: string; name: string };
  const conv: Record<string, { conversation_id: string; visitor_token: string }> = {};
  const answers: Record<string, string> = {};

  async function say(name: string, content: string): Promise<{ id: string; sources: unknown[] } | null> {
    const { conversation_id: id, visitor_token: token } = conv[name]!;
    const response = await must<{ reply: { id: string; sources: unknown[] } | null }>(widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content } }), 201);
    return response.reply;
  }
  const rate = (name: string, messageId: string, rating: string) =>
    must(widget(t.app, 'POST', `/widget/v1/conversations/${conv[name]!.conversation_id}/messages/${messageId}/feedback`, { token: conv[name]!.visitor_token, body: { rating } }), 200);
  const handoff = (name: string) =>
    must<{ handoff_requested_at: string; reply: unknown }>(widget(t.app, 'POST', `/widget/v1/conversations/${conv[name]!.conversation_id}/handoff`, { token: conv[name]!.visitor_token }), 200);
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await createTestApp({}, { replyEngine: scripted });
    tenant = await t.tenant();
    other = await t.tenant();
    a = await makeActiveChatbot(tenant, { name: 'A' });
    b = await makeActiveChatbot(tenant, { name: 'B' });
    for (const [name, bot] of [['c1', a], ['c2', a], ['c3', a], ['c4', b]] as const) conv[name] = await startConversation(t.app, bot.id);

    // Agent A: 3 answered, 2 unanswered ("What is X?", "what is x"), 1 conversational, 2 handoffs.
    answers.a1 = (await say('c1', 'How do I order?'))!.id;
    answers.a2 = (await say('c1', 'And delivery?'))!.id;
    await say('c1', 'What is X?');
    await say('c1', 'hi there');
    await say('c2', 'what is x');
    answers.a3 = (await say('c2', 'Where are you?'))!.id;
    await handoff('c2'); // the widget's button
    await handoff('c2'); // again: no second handoff
    await say('c3', 'Can I talk to a person?'); // in words: the engine's handoff turn
    await handoff('c3'); // already waiting: nothing more
    // Feedback on A's answers: a1 up; a2 up then down (the latest counts); a3 down.
    await rate('c1', answers.a1, 'up');
    await rate('c1', answers.a2, 'up');
    await rate('c1', answers.a2, 'down');
    await rate('c2', answers.a3, 'down');
    // Agent B: 1 answered, 1 unanswered.
    answers.b1 = (await say('c4', 'Prices?'))!.id;
    await say('c4', 'WHAT is X??');
  });
  afterAll(async () => t.close());

  it('stores sources and outcome with each answer', async () => {
    const listed = await must<{ data: { role: string; sources: unknown[] }[] }>(tenant.request('GET', `/api/v1/conversations/${conv.c1!.conversation_id}/messages`), 200);
    expect(listed.data.map((m) => [m.role, m.sources.length])).toEqual([
      ['user', 0], ['assistant', 1], ['user', 0], ['assistant', 1], ['user', 0], ['assistant', 0], ['user', 0], ['assistant', 0],
    ]);
    const outcomes = await t.app.database.db.selectFrom('messages').select('outcome').where('conversation_id', '=', conv.c1!.conversation_id).orderBy('created_at').execute();
    expect(outcomes.map((m) => m.outcome)).toEqual([null, 'answered', null, 'answered', null, 'unanswered', null, 'conversational']);
  });

  it('lists the conversations waiting for a person; an operator reply takes one off the list', async () => {
    const waiting = async () =>
      (await must<{ data: { id: string; handoff_requested_at: string | null }[] }>(tenant.request('GET', '/api/v1/conversations?handoff=requested'), 200)).data.map((c) => c.id).sort();
    expect(await waiting()).toEqual([conv.c2!.conversation_id, conv.c3!.conversation_id].sort());
    const c3 = await must<{ handoff_requested_at: string | null; mode: string }>(tenant.request('GET', `/api/v1/conversations/${conv.c3!.conversation_id}`), 200);
    expect(c3.handoff_requested_at).toMatch(/Z$/);
    const c1 = await must<{ handoff_requested_at: string | null }>(tenant.request('GET', `/api/v1/conversations/${conv.c1!.conversation_id}`), 200);
    expect(c1.handoff_requested_at).toBeNull();
    await must(tenant.request('POST', `/api/v1/conversations/${conv.c2!.conversation_id}/messages`, { content: 'Hi, Sam here.', role: 'operator' }), 201);
    expect(await waiting()).toEqual([conv.c3!.conversation_id]);
    // A closed conversation waits for no one.
    await t.app.services.conversations.close(systemContext(tenant.workspaceId, 'test'), conv.c3!.conversation_id);
    expect(await waiting()).toEqual([]);
    expectProblem(await tenant.request('GET', '/api/v1/conversations?handoff=maybe'), 400, 'validation_failed');
  });

  it('groups the unanswered questions by normalized text, newest group first, per agent', async () => {
    expect(normalizeQuestion('  Qué   es X?! ')).toBe('que es x');
    const all = await must<{ object: string; data: unknown[] }>(tenant.request('GET', '/api/v1/analytics/unanswered'), 200);
    expect(all).toEqual({
      object: 'list',
      data: [
        { question: 'WHAT is X??', normalized: 'what is x', count: 1, last_asked_at: expect.stringMatching(/Z$/), chatbot_id: b.id },
        { question: 'what is x', normalized: 'what is x', count: 2, last_asked_at: expect.stringMatching(/Z$/), chatbot_id: a.id },
      ],
    });
    const ofA = await must<{ data: { question: string; count: number }[] }>(tenant.request('GET', `/api/v1/analytics/unanswered?chatbot_id=${a.id}&from=${today()}&to=${today()}`), 200);
    expect(ofA.data).toEqual([expect.objectContaining({ question: 'what is x', count: 2, chatbot_id: a.id })]);
    const limited = await must<{ data: unknown[] }>(tenant.request('GET', '/api/v1/analytics/unanswered?limit=1'), 200);
    expect(limited.data).toHaveLength(1);
    const before = await must<{ data: unknown[] }>(tenant.request('GET', '/api/v1/analytics/unanswered?from=2020-01-01&to=2020-01-31'), 200);
    expect(before.data).toEqual([]);
    // Another workspace's agent, or none: 404; its own list is empty.
    expectProblem(await other.request('GET', `/api/v1/analytics/unanswered?chatbot_id=${a.id}`), 404, 'not_found');
    expectProblem(await tenant.request('GET', '/api/v1/analytics/unanswered?chatbot_id=bot_01ARZ3NDEKTSV4RRFFQ69G5FAV'), 404, 'not_found');
    expect((await must<{ data: unknown[] }>(other.request('GET', '/api/v1/analytics/unanswered'), 200)).data).toEqual([]);
    expectProblem(await tenant.request('GET', '/api/v1/analytics/unanswered?limit=101'), 400, 'validation_failed');
    const readOnly = await tenant.newKey(['chatbots:read']);
    const forbidden = await t.app.inject({ method: 'GET', url: '/api/v1/analytics/unanswered', headers: { authorization: `Bearer ${readOnly.key}` } });
    expectProblem(forbidden, 403);
  });

  it('counts answered, unanswered, the answer rate, feedback and handoffs: totals, daily, per agent', async () => {
    const ofA = await must<Summary>(tenant.request('GET', `/api/v1/analytics?chatbot_id=${a.id}&from=${today()}&to=${today()}`), 200);
    const expectedA = { answered: 3, unanswered: 2, answer_rate: 0.6, feedback_up: 1, feedback_down: 2, handoffs: 2 };
    expect(ofA.answers).toEqual(expectedA);
    expect(ofA.daily).toEqual([expect.objectContaining({ date: today(), ...expectedA })]);

    const ofB = await must<Summary>(tenant.request('GET', `/api/v1/analytics?chatbot_id=${b.id}`), 200);
    expect(ofB.answers).toEqual({ answered: 1, unanswered: 1, answer_rate: 0.5, feedback_up: 0, feedback_down: 0, handoffs: 0 });

    const all = await must<Summary>(tenant.request('GET', '/api/v1/analytics'), 200);
    expect(all.answers).toEqual({ answered: 4, unanswered: 3, answer_rate: 0.5714, feedback_up: 1, feedback_down: 2, handoffs: 2 });
    const quiet = all.daily.find((d) => d.date !== today())!;
    expect(quiet).toMatchObject({ answered: 0, unanswered: 0, answer_rate: null, feedback_up: 0, feedback_down: 0, handoffs: 0 });

    // The counters rebuilt from the data (bulk loads, repairs) are the ones kept with each write.
    await rebuildDailyStats(t.app.database.db, tenant.workspaceId);
    expect((await must<Summary>(tenant.request('GET', '/api/v1/analytics'), 200)).answers).toEqual(all.answers);
    expect((await must<Summary>(tenant.request('GET', `/api/v1/analytics?chatbot_id=${a.id}`), 200)).answers).toEqual(expectedA);

    const empty = await must<Summary>(other.request('GET', '/api/v1/analytics'), 200);
    expect(empty.answers).toEqual({ answered: 0, unanswered: 0, answer_rate: null, feedback_up: 0, feedback_down: 0, handoffs: 0 });
  });
});

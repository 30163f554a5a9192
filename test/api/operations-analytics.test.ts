import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem, expectSnakeCase, must, testClock } from './support.js';

// GET /analytics: totals and the daily series computed from data created at known instants.
// The period is whole UTC days, `to` included (docs/decisions/0004-analytics-daily-counters.md).

const clock = testClock();
let t: TestApp;
let tenant: Tenant;
const bots = {} as Record<'active' | 'draft' | 'paused' | 'archived', { id: string }>;
const NOW = '2026-03-10T15:00:00.000Z';
const DAY = 86_400_000;

type Summary = {
  object: string;
  from: string;
  to: string;
  chatbot_id: string | null;
  conversations: { total: number; open: number; closed: number };
  messages: { total: number; user: number; assistant: number; operator: number };
  leads: { total: number; conversion_rate: number };
  chatbots: { total: number; draft: number; active: number; paused: number; archived: number };
  average_messages_per_conversation: number;
  daily: { date: string; conversations: number; messages: number; leads: number }[];
};

async function summary(query = ''): Promise<Summary> {
  const response = await tenant.request('GET', `/api/v1/analytics${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Summary;
}

const dayOf = (s: Summary, date: string) => s.daily.find((d) => d.date === date);
/** The answer figures of a day without agent answers, ratings or handoffs (issue 31). */
const QUIET = { answered: 0, unanswered: 0, answer_rate: null, feedback_up: 0, feedback_down: 0, handoffs: 0 };

beforeAll(async () => {
  t = await createTestApp({}, { clock, replyWorker: false }); // exact fixtures: no agent answers appear in the background
  tenant = await t.tenant();
  const ctx = systemContext(tenant.workspaceId, 'test');
  const post = (conversationId: string, content: string, role?: string) =>
    must(tenant.request('POST', `/api/v1/conversations/${conversationId}/messages`, { content, ...(role ? { role } : {}) }), 201);
  const patch = (id: string, status: string) => must(tenant.request('PATCH', `/api/v1/chatbots/${id}`, { status }), 200);

  // Time only moves forward here (the rate limiter, like any real clock, expects that).
  // Long before the default period: agents, and one conversation that must not count by default.
  clock.set('2025-12-01T12:00:00.000Z');
  bots.active = await makeChatbot(tenant, { name: 'active' });
  await patch(bots.active.id, 'active');
  bots.draft = await makeChatbot(tenant, { name: 'draft' });
  bots.paused = await makeChatbot(tenant, { name: 'paused' });
  await patch(bots.paused.id, 'active');
  bots.archived = await makeChatbot(tenant, { name: 'archived' });
  await patch(bots.archived.id, 'archived');

  const old = await t.app.services.conversations.start(ctx, { chatbotId: bots.active.id, channel: 'widget' });
  await post(old.id, 'ancient');

  // 1 March: conversation c1 (active agent) with 2 user, 1 assistant and 1 operator message.
  clock.set('2026-03-01T12:00:00.000Z');
  const c1 = await t.app.services.conversations.start(ctx, { chatbotId: bots.active.id, channel: 'widget' });
  await post(c1.id, 'hello');
  await t.app.services.messages.append(ctx, c1.id, { role: 'assistant', content: 'hi!', author: { type: 'agent', id: bots.active.id } });
  await post(c1.id, 'help me');
  await post(c1.id, 'a human here', 'operator');

  // 3 March: conversation c2 (paused agent) with 1 user message, closed; two leads, one linked to c1.
  clock.set('2026-03-03T08:00:00.000Z');
  const c2 = await t.app.services.conversations.start(ctx, { chatbotId: bots.paused.id, channel: 'api' });
  await post(c2.id, 'question');
  await t.app.services.conversations.close(ctx, c2.id);
  // Paused only now: a paused agent's conversations take no visitor messages.
  await patch(bots.paused.id, 'paused');
  await must(tenant.request('POST', '/api/v1/leads', { email: 'c1@example.com', conversation_id: c1.id }), 201);
  await must(tenant.request('POST', '/api/v1/leads', { phone: '+1 555 0100' }), 201);

  // Another workspace's data never counts.
  const other = await t.tenant();
  const otherBot = await makeChatbot(other);
  await t.app.services.conversations.start(systemContext(other.workspaceId), { chatbotId: otherBot.id, channel: 'widget' });
  await must(other.request('POST', '/api/v1/leads', { email: 'other@example.com' }), 201);

  clock.set(NOW);
});
afterAll(() => t.close());

describe('GET /analytics', () => {
  it('defaults to the 30 days ending today and computes the totals from the data', async () => {
    const s = await summary();
    expectSnakeCase(s);
    expect(s.object).toBe('analytics_summary');
    // `to` in the response is the exclusive end: midnight after today
    expect(s.to).toBe('2026-03-11T00:00:00.000Z');
    expect(s.from).toBe(new Date(Date.parse('2026-03-11T00:00:00.000Z') - 30 * DAY).toISOString());
    expect(s.chatbot_id).toBeNull();
    expect(s.conversations).toEqual({ total: 2, open: 1, closed: 1 });
    expect(s.messages).toEqual({ total: 5, user: 3, assistant: 1, operator: 1 });
    expect(s.leads.total).toBe(2);
    expect(s.leads.conversion_rate).toBe(0.5);
    expect(s.chatbots).toEqual({ total: 4, draft: 1, active: 1, paused: 1, archived: 1 });
    expect(s.average_messages_per_conversation).toBe(2.5);
  });

  it('has one daily entry per UTC day of the period, oldest first, with the counts of each day', async () => {
    const s = await summary();
    const dates = s.daily.map((d) => d.date);
    expect(dates[0]).toBe('2026-02-09');
    expect(dates[dates.length - 1]).toBe('2026-03-10');
    expect(dates).toHaveLength(30);
    expect(new Set(dates).size).toBe(dates.length);
    expect([...dates].sort()).toEqual(dates);
    expect(dayOf(s, '2026-03-01')).toEqual({ date: '2026-03-01', conversations: 1, messages: 4, leads: 0, ...QUIET });
    expect(dayOf(s, '2026-03-03')).toEqual({ date: '2026-03-03', conversations: 1, messages: 1, leads: 2, ...QUIET });
    expect(dayOf(s, '2026-03-02')).toEqual({ date: '2026-03-02', conversations: 0, messages: 0, leads: 0, ...QUIET });
    const sum = (field: 'conversations' | 'messages' | 'leads') => s.daily.reduce((n, d) => n + d[field], 0);
    expect(sum('conversations')).toBe(s.conversations.total);
    expect(sum('messages')).toBe(s.messages.total);
    expect(sum('leads')).toBe(s.leads.total);
  });

  it('takes an explicit period of days, `to` included', async () => {
    const s = await summary('?from=2026-03-02&to=2026-03-03');
    expect(s.from).toBe('2026-03-02T00:00:00.000Z');
    expect(s.to).toBe('2026-03-04T00:00:00.000Z');
    expect(s.daily.map((d) => d.date)).toEqual(['2026-03-02', '2026-03-03']);
    expect(s.conversations).toEqual({ total: 1, open: 0, closed: 1 });
    expect(s.messages).toEqual({ total: 1, user: 1, assistant: 0, operator: 0 });
    expect(s.leads.total).toBe(2);
    expect(s.leads.conversion_rate).toBe(0);
  });

  it('takes date-times as the UTC days they fall on', async () => {
    const s = await summary(`?from=${encodeURIComponent('2026-03-01T23:59:59.999Z')}&to=${encodeURIComponent('2026-03-03T00:00:00.000Z')}`);
    expect(s.from).toBe('2026-03-01T00:00:00.000Z');
    expect(s.to).toBe('2026-03-04T00:00:00.000Z');
    expect(s.daily.map((d) => d.date)).toEqual(['2026-03-01', '2026-03-02', '2026-03-03']);
    expect(s.conversations.total).toBe(2);
    expect(s.messages.total).toBe(5);
    expect(s.leads.total).toBe(2);
    const oneDay = await summary(`?from=${encodeURIComponent('2026-03-01T12:00:00.000Z')}&to=${encodeURIComponent('2026-03-01T13:00:00.000Z')}`);
    expect(oneDay.daily.map((d) => d.date)).toEqual(['2026-03-01']);
    expect(oneDay.conversations.total).toBe(1);
    expect(oneDay.messages.total).toBe(4);
  });

  it('counts the old data when the period covers it', async () => {
    const s = await summary('?from=2025-11-30&to=2025-12-02');
    expect(s.conversations.total).toBe(1);
    expect(s.messages).toEqual({ total: 1, user: 1, assistant: 0, operator: 0 });
  });

  it('narrows to one agent with chatbot_id', async () => {
    const s = await summary(`?chatbot_id=${bots.active.id}`);
    expect(s.chatbot_id).toBe(bots.active.id);
    expect(s.conversations).toEqual({ total: 1, open: 1, closed: 0 });
    expect(s.messages).toEqual({ total: 4, user: 2, assistant: 1, operator: 1 });
    expect(s.leads.total).toBe(1);
    expect(s.leads.conversion_rate).toBe(1);
    expect(s.chatbots).toEqual({ total: 1, draft: 0, active: 1, paused: 0, archived: 0 });
    expect(s.average_messages_per_conversation).toBe(4);
    const none = await summary(`?chatbot_id=${bots.draft.id}`);
    expect(none.conversations.total).toBe(0);
    expect(none.average_messages_per_conversation).toBe(0);
    expect(none.leads.conversion_rate).toBe(0);
  });

  it('accepts a period of exactly 366 days and refuses a longer one with 400', async () => {
    const ok = await summary('?from=2025-01-01&to=2026-01-01');
    expect(ok.daily).toHaveLength(366);
    expect(ok.from).toBe('2025-01-01T00:00:00.000Z');
    expect(ok.to).toBe('2026-01-02T00:00:00.000Z');
    expectProblem(await tenant.request('GET', '/api/v1/analytics?from=2025-01-01&to=2026-01-02'), 400, 'validation_failed');
    const tooLong = await tenant.request('GET', `/api/v1/analytics?from=${encodeURIComponent('2025-01-01T23:00:00.000Z')}&to=${encodeURIComponent('2026-01-02T00:00:00.000Z')}`);
    expectProblem(tooLong, 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/analytics?from=2020-01-01&to=2026-01-01'), 400, 'validation_failed');
    // a far `from` with the default `to` is too long as well
    expectProblem(await tenant.request('GET', '/api/v1/analytics?from=2024-01-01'), 400, 'validation_failed');
  });

  it('refuses a `from` after `to` with 400; the same day is a one-day period', async () => {
    expectProblem(await tenant.request('GET', '/api/v1/analytics?from=2026-03-05&to=2026-03-01'), 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/analytics?from=2026-03-02&to=2026-03-01'), 400, 'validation_failed');
    const later = encodeURIComponent('2026-03-02T00:00:00.000Z');
    const earlier = encodeURIComponent('2026-03-01T23:59:59.999Z');
    expectProblem(await tenant.request('GET', `/api/v1/analytics?from=${later}&to=${earlier}`), 400, 'validation_failed');
    const same = await summary('?from=2026-03-03&to=2026-03-03');
    expect(same.daily).toEqual([{ date: '2026-03-03', conversations: 1, messages: 1, leads: 2, ...QUIET }]);
    // a `to` before the default 30-day `from` is fine: `from` follows `to`
    const s = await summary('?to=2026-03-01');
    expect(s.from).toBe('2026-01-31T00:00:00.000Z');
  });

  it('refuses malformed dates, a malformed chatbot_id and unknown parameters with 400', async () => {
    const bad = expectProblem(await tenant.request('GET', '/api/v1/analytics?from=last-week'), 400, 'validation_failed');
    expect(JSON.stringify(bad.errors)).toContain('from');
    expectProblem(await tenant.request('GET', '/api/v1/analytics?to=2026-13-45'), 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/analytics?chatbot_id=agent-1'), 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/analytics?period=week'), 400, 'validation_failed');
  });
});

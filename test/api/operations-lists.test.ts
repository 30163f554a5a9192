import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeLead } from '../helpers/factories.js';
import { expectProblem, must, testClock } from './support.js';

// The filters of every list, on data created at known instants (the clock is pinned and moved by hand).

const clock = testClock();
let t: TestApp;
let tenant: Tenant;

const MINUTE = 60_000;
const T0 = Date.parse('2026-02-01T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * MINUTE).toISOString();
const q = (value: string) => encodeURIComponent(value);

type Item = { id: string };
const ids = (body: { data: Item[] }) => body.data.map((item) => item.id);

async function list(url: string): Promise<string[]> {
  const response = await tenant.request('GET', url);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.json().object).toBe('list');
  return ids(response.json());
}

const data = {} as {
  draft: Item; active: Item; paused: Item; archived: Item;
  c1: Item; c2: Item; c3: Item;
  l1: Item; l2: Item; l3: Item;
  messages: Item[];
};

beforeAll(async () => {
  t = await createTestApp({}, { clock, replyWorker: false }); // exact fixtures: no agent answers appear in the background
  tenant = await t.tenant();
  const ctx = systemContext(tenant.workspaceId, 'test');
  const patch = (id: string, status: string) => must(tenant.request('PATCH', `/api/v1/chatbots/${id}`, { status }), 200);

  clock.set(at(0));
  data.draft = await makeChatbot(tenant, { name: 'draft' });
  clock.set(at(1));
  data.active = await makeChatbot(tenant, { name: 'active' });
  await patch(data.active.id, 'active');
  clock.set(at(2));
  data.paused = await makeChatbot(tenant, { name: 'paused' });
  await patch(data.paused.id, 'active');
  await patch(data.paused.id, 'paused');
  clock.set(at(3));
  data.archived = await makeChatbot(tenant, { name: 'archived' });
  await patch(data.archived.id, 'archived');

  clock.set(at(10));
  data.c1 = await t.app.services.conversations.start(ctx, { chatbotId: data.active.id, channel: 'widget' });
  clock.set(at(11));
  data.c2 = await t.app.services.conversations.start(ctx, { chatbotId: data.active.id, channel: 'api' });
  clock.set(at(12));
  data.c3 = await t.app.services.conversations.start(ctx, { chatbotId: data.paused.id, channel: 'dashboard' });
  await t.app.services.conversations.close(ctx, data.c3.id);

  data.messages = [];
  for (let i = 0; i < 3; i++) {
    clock.set(at(20 + i));
    data.messages.push(await must<Item>(tenant.request('POST', `/api/v1/conversations/${data.c1.id}/messages`, { content: `m${i}` }), 201));
  }

  clock.set(at(30));
  data.l1 = await makeLead(tenant, { email: 'Ada.Lovelace@Example.com', conversation_id: data.c1.id });
  clock.set(at(31));
  data.l2 = await makeLead(tenant, { email: 'grace@example.com', chatbot_id: data.paused.id, status: 'contacted' });
  clock.set(at(32));
  data.l3 = await makeLead(tenant, { phone: '+1 555 0100', email: null });
  clock.set(at(40));
  await must(tenant.request('PATCH', `/api/v1/leads/${data.l1.id}`, { status: 'qualified' }), 200);
});
afterAll(() => t.close());

describe('GET /chatbots filters', () => {
  it('lists all agents newest first', async () => {
    expect(await list('/api/v1/chatbots')).toEqual([data.archived.id, data.paused.id, data.active.id, data.draft.id]);
  });

  it('filters by each status', async () => {
    expect(await list('/api/v1/chatbots?status=draft')).toEqual([data.draft.id]);
    expect(await list('/api/v1/chatbots?status=active')).toEqual([data.active.id]);
    expect(await list('/api/v1/chatbots?status=paused')).toEqual([data.paused.id]);
    expect(await list('/api/v1/chatbots?status=archived')).toEqual([data.archived.id]);
  });

  it('filters by created_after / created_before (both exclusive)', async () => {
    expect(await list(`/api/v1/chatbots?created_after=${q(at(1))}`)).toEqual([data.archived.id, data.paused.id]);
    expect(await list(`/api/v1/chatbots?created_before=${q(at(2))}`)).toEqual([data.active.id, data.draft.id]);
    expect(await list(`/api/v1/chatbots?created_after=${q(at(0))}&created_before=${q(at(3))}`)).toEqual([data.paused.id, data.active.id]);
    expect(await list(`/api/v1/chatbots?created_after=${q(at(3))}`)).toEqual([]);
  });

  it('understands instants with an offset', async () => {
    // 11:01+01:00 is 10:01Z, when the active agent was created
    expect(await list(`/api/v1/chatbots?created_after=${q('2026-02-01T11:01:00.000+01:00')}`)).toEqual([data.archived.id, data.paused.id]);
  });

  it('refuses an unknown status, a malformed instant and an unknown filter with 400', async () => {
    expectProblem(await tenant.request('GET', '/api/v1/chatbots?status=deleted'), 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/chatbots?created_after=yesterday'), 400, 'validation_failed');
    const unknown = expectProblem(await tenant.request('GET', '/api/v1/chatbots?colour=red'), 400, 'validation_failed');
    expect(JSON.stringify(unknown.errors)).toContain('colour');
  });
});

describe('GET /conversations filters', () => {
  it('lists every channel, newest first', async () => {
    expect(await list('/api/v1/conversations')).toEqual([data.c3.id, data.c2.id, data.c1.id]);
  });

  it('filters by chatbot_id, status and channel, alone and combined', async () => {
    expect(await list(`/api/v1/conversations?chatbot_id=${data.active.id}`)).toEqual([data.c2.id, data.c1.id]);
    expect(await list(`/api/v1/conversations?chatbot_id=${data.paused.id}`)).toEqual([data.c3.id]);
    expect(await list(`/api/v1/conversations?chatbot_id=${data.draft.id}`)).toEqual([]);
    expect(await list('/api/v1/conversations?status=closed')).toEqual([data.c3.id]);
    expect(await list('/api/v1/conversations?status=open')).toEqual([data.c2.id, data.c1.id]);
    expect(await list('/api/v1/conversations?channel=api')).toEqual([data.c2.id]);
    expect(await list('/api/v1/conversations?channel=widget')).toEqual([data.c1.id]);
    expect(await list('/api/v1/conversations?channel=dashboard')).toEqual([data.c3.id]);
    expect(await list(`/api/v1/conversations?chatbot_id=${data.active.id}&channel=widget&status=open`)).toEqual([data.c1.id]);
    expect(await list(`/api/v1/conversations?chatbot_id=${data.active.id}&status=closed`)).toEqual([]);
  });

  it('filters by created_after / created_before', async () => {
    expect(await list(`/api/v1/conversations?created_after=${q(at(10))}`)).toEqual([data.c3.id, data.c2.id]);
    expect(await list(`/api/v1/conversations?created_before=${q(at(11))}`)).toEqual([data.c1.id]);
  });

  it('refuses an unknown status or channel with 400', async () => {
    expectProblem(await tenant.request('GET', '/api/v1/conversations?status=archived'), 400, 'validation_failed');
    expectProblem(await tenant.request('GET', '/api/v1/conversations?channel=sms'), 400, 'validation_failed');
  });
});

describe('GET /conversations/{id}/messages filters', () => {
  it('filters by created_after / created_before in both orders', async () => {
    const [m0, m1, m2] = data.messages as [Item, Item, Item];
    const base = `/api/v1/conversations/${data.c1.id}/messages`;
    expect(await list(base)).toEqual([m0.id, m1.id, m2.id]);
    expect(await list(`${base}?created_after=${q(at(20))}`)).toEqual([m1.id, m2.id]);
    expect(await list(`${base}?created_before=${q(at(22))}`)).toEqual([m0.id, m1.id]);
    expect(await list(`${base}?created_before=${q(at(22))}&order=desc`)).toEqual([m1.id, m0.id]);
    expect(await list(`/api/v1/conversations/${data.c2.id}/messages`)).toEqual([]);
  });

  it('refuses an unknown order with 400', async () => {
    expectProblem(await tenant.request('GET', `/api/v1/conversations/${data.c1.id}/messages?order=random`), 400, 'validation_failed');
  });
});

describe('GET /leads filters', () => {
  it('lists leads newest first (by creation, not by update)', async () => {
    expect(await list('/api/v1/leads')).toEqual([data.l3.id, data.l2.id, data.l1.id]);
  });

  it('filters by chatbot_id, conversation_id and status', async () => {
    expect(await list(`/api/v1/leads?chatbot_id=${data.active.id}`)).toEqual([data.l1.id]);
    expect(await list(`/api/v1/leads?chatbot_id=${data.paused.id}`)).toEqual([data.l2.id]);
    expect(await list(`/api/v1/leads?conversation_id=${data.c1.id}`)).toEqual([data.l1.id]);
    expect(await list(`/api/v1/leads?conversation_id=${data.c2.id}`)).toEqual([]);
    expect(await list('/api/v1/leads?status=qualified')).toEqual([data.l1.id]);
    expect(await list('/api/v1/leads?status=contacted')).toEqual([data.l2.id]);
    expect(await list('/api/v1/leads?status=new')).toEqual([data.l3.id]);
    expect(await list('/api/v1/leads?status=converted')).toEqual([]);
    expectProblem(await tenant.request('GET', '/api/v1/leads?status=hot'), 400, 'validation_failed');
  });

  it('filters by exact email, case-insensitively', async () => {
    expect(await list(`/api/v1/leads?email=${q('ada.lovelace@example.com')}`)).toEqual([data.l1.id]);
    expect(await list(`/api/v1/leads?email=${q('ADA.LOVELACE@EXAMPLE.COM')}`)).toEqual([data.l1.id]);
    expect(await list(`/api/v1/leads?email=${q('Grace@Example.Com')}`)).toEqual([data.l2.id]);
    expect(await list(`/api/v1/leads?email=${q('example.com')}`)).toEqual([]);
    expect(await list(`/api/v1/leads?email=${q('ada')}`)).toEqual([]);
  });

  it('filters by created_after / created_before', async () => {
    expect(await list(`/api/v1/leads?created_after=${q(at(30))}`)).toEqual([data.l3.id, data.l2.id]);
    expect(await list(`/api/v1/leads?created_before=${q(at(31))}`)).toEqual([data.l1.id]);
    expect(await list(`/api/v1/leads?created_after=${q(at(30))}&created_before=${q(at(32))}`)).toEqual([data.l2.id]);
  });

  it('filters by updated_after (for sync): only leads changed after the instant', async () => {
    expect(await list(`/api/v1/leads?updated_after=${q(at(35))}`)).toEqual([data.l1.id]);
    expect(await list(`/api/v1/leads?updated_after=${q(at(31))}`)).toEqual([data.l3.id, data.l1.id]);
    expect(await list(`/api/v1/leads?updated_after=${q(at(40))}`)).toEqual([]);
    expectProblem(await tenant.request('GET', '/api/v1/leads?updated_after=soon'), 400, 'validation_failed');
  });

  it('combines filters', async () => {
    expect(await list(`/api/v1/leads?chatbot_id=${data.active.id}&status=new`)).toEqual([]);
    expect(await list(`/api/v1/leads?chatbot_id=${data.active.id}&status=qualified&email=${q('ADA.lovelace@example.com')}`)).toEqual([data.l1.id]);
  });
});

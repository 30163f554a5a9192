import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeLead } from '../helpers/factories.js';
import { expectProblem, must, testClock } from './support.js';

// The AI Agent state machine (draft → active ⇄ paused → archived, archived read-only), published_at,
// no-op PATCHes, and If-Match / ETag on chatbots and leads.

type Status = 'draft' | 'active' | 'paused' | 'archived';
type Bot = { id: string; status: Status; updated_at: string; published_at: string | null; [field: string]: unknown };

const clock = testClock();
let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  tenant = await t.tenant();
});
afterAll(() => t.close());

const patch = (id: string, body: unknown, headers: Record<string, string> = {}) => tenant.request('PATCH', `/api/v1/chatbots/${id}`, body, headers);
const read = (id: string) => tenant.request('GET', `/api/v1/chatbots/${id}`);

/** A new agent (with instructions) brought to the given state through the allowed transitions. */
async function agentIn(status: Status, overrides: Record<string, unknown> = {}): Promise<Bot> {
  const bot = (await makeChatbot(tenant, overrides)) as Bot;
  const path: Record<Status, Status[]> = { draft: [], active: ['active'], paused: ['active', 'paused'], archived: ['archived'] };
  let current = bot;
  for (const step of path[status]) current = await must<Bot>(patch(bot.id, { status: step }), 200);
  expect(current.status).toBe(status);
  return current;
}

async function expectUnchanged(before: Bot, response: LightMyRequestResponse, code: string) {
  const problem = expectProblem(response, 409, code);
  const after = await read(before.id);
  expect(after.json()).toEqual(before);
  return problem;
}

describe('allowed transitions', () => {
  it.each([
    ['draft', 'active'],
    ['draft', 'archived'],
    ['active', 'paused'],
    ['active', 'archived'],
    ['paused', 'active'],
    ['paused', 'archived'],
  ] as [Status, Status][])('%s → %s', async (from, to) => {
    const bot = await agentIn(from);
    const response = await patch(bot.id, { status: to });
    expect(response.statusCode, response.body).toBe(200);
    const moved = response.json() as Bot;
    expect(moved.status).toBe(to);
    expect(moved.updated_at > bot.updated_at).toBe(true);
    expect((await read(bot.id)).json()).toEqual(moved);
  });

  it('draft → active is allowed with knowledge and no instructions', async () => {
    const bot = await agentIn('draft', { instructions: '', knowledge: [{ title: 'FAQ', content: 'We open at 9.' }] });
    expect((await patch(bot.id, { status: 'active' })).json().status).toBe('active');
  });

  it('draft → active is allowed when the same PATCH adds the instructions', async () => {
    const bot = await agentIn('draft', { instructions: '' });
    const response = await patch(bot.id, { status: 'active', instructions: 'Answer politely.' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ status: 'active', instructions: 'Answer politely.' });
  });
});

describe('refused transitions', () => {
  it('draft → active without instructions and knowledge is 409 invalid_status_transition', async () => {
    for (const instructions of ['', '   \n ']) {
      const bot = await agentIn('draft', { instructions });
      await expectUnchanged(bot, await patch(bot.id, { status: 'active' }), 'invalid_status_transition');
    }
  });

  it('draft → active is refused when the same PATCH removes the only knowledge', async () => {
    const bot = await agentIn('draft', { instructions: '', knowledge: [{ title: 'FAQ', content: 'x' }] });
    await expectUnchanged(bot, await patch(bot.id, { status: 'active', knowledge: [] }), 'invalid_status_transition');
  });

  it.each([
    ['draft', 'paused'],
    ['active', 'draft'],
    ['paused', 'draft'],
  ] as [Status, Status][])('%s → %s is 409 invalid_status_transition', async (from, to) => {
    const bot = await agentIn(from);
    const problem = await expectUnchanged(bot, await patch(bot.id, { status: to }), 'invalid_status_transition');
    expect(problem.detail).toContain(from);
  });

  it.each(['draft', 'active', 'paused', 'archived'] as Status[])('archived → %s is 409 chatbot_archived', async (to) => {
    const bot = await agentIn('archived');
    await expectUnchanged(bot, await patch(bot.id, { status: to }), 'chatbot_archived');
  });

  it('any PATCH of an archived agent is 409 chatbot_archived, even without a status, even empty', async () => {
    const bot = await agentIn('archived');
    for (const body of [{ name: 'renamed' }, { description: null }, { metadata: { a: 'b' } }, {}]) {
      await expectUnchanged(bot, await patch(bot.id, body), 'chatbot_archived');
    }
  });
});

describe('published_at', () => {
  it('is null on a draft, set on the first publish, and kept through pause, resume and archive', async () => {
    const bot = await agentIn('draft');
    expect(bot.published_at).toBeNull();
    const active = (await patch(bot.id, { status: 'active' })).json() as Bot;
    expect(active.published_at).toBe(active.updated_at);
    const paused = (await patch(bot.id, { status: 'paused' })).json() as Bot;
    expect(paused.published_at).toBe(active.published_at);
    const resumed = (await patch(bot.id, { status: 'active' })).json() as Bot;
    expect(resumed.published_at).toBe(active.published_at);
    expect(resumed.updated_at > paused.updated_at).toBe(true);
    const archived = (await patch(bot.id, { status: 'archived' })).json() as Bot;
    expect(archived.published_at).toBe(active.published_at);
  });

  it('stays null when a draft is archived without ever being published', async () => {
    const bot = await agentIn('draft');
    expect((await patch(bot.id, { status: 'archived' })).json().published_at).toBeNull();
  });

  it('is not set by a refused publish', async () => {
    const bot = await agentIn('draft', { instructions: '' });
    await patch(bot.id, { status: 'active' });
    expect((await read(bot.id)).json().published_at).toBeNull();
  });
});

describe('no-op PATCH', () => {
  it.each(['draft', 'active', 'paused'] as Status[])('the same status on a %s agent keeps updated_at and the ETag', async (status) => {
    const bot = await agentIn(status);
    const before = await read(bot.id);
    const response = await patch(bot.id, { status });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(before.json());
    expect(response.headers.etag).toBe(before.headers.etag);
  });

  it('unchanged values and an empty body keep updated_at and the ETag', async () => {
    const bot = await agentIn('active', { description: 'same' });
    const before = await read(bot.id);
    for (const body of [{}, { name: bot.name, description: 'same' }, { description: 'same', status: 'active' }]) {
      const response = await patch(bot.id, body);
      expect(response.statusCode).toBe(200);
      expect(response.json().updated_at).toBe(before.json().updated_at);
      expect(response.headers.etag).toBe(before.headers.etag);
    }
  });
});

describe('If-Match', () => {
  const resources = [
    {
      name: 'chatbots',
      create: async () => (await makeChatbot(tenant)).id as string,
      change: (n: number) => ({ description: `v${n}` }),
    },
    {
      name: 'leads',
      create: async () => (await makeLead(tenant)).id as string,
      change: (n: number) => ({ company: `Company v${n}` }),
    },
  ];

  describe.each(resources)('$name', ({ name, create, change }) => {
    const url = (id: string) => `/api/v1/${name}/${id}`;

    it('a matching ETag updates and answers a new ETag, which is the one GET then returns', async () => {
      const id = await create();
      const etag = String((await tenant.request('GET', url(id))).headers.etag);
      const response = await tenant.request('PATCH', url(id), change(1), { 'if-match': etag });
      expect(response.statusCode, response.body).toBe(200);
      const newEtag = String(response.headers.etag);
      expect(newEtag).not.toBe(etag);
      expect((await tenant.request('GET', url(id))).headers.etag).toBe(newEtag);
      // the new ETag is good for the next write, the old one is not
      expect((await tenant.request('PATCH', url(id), change(2), { 'if-match': newEtag })).statusCode).toBe(200);
    });

    it('a stale ETag is 412 precondition_failed and changes nothing', async () => {
      const id = await create();
      const stale = String((await tenant.request('GET', url(id))).headers.etag);
      await must(tenant.request('PATCH', url(id), change(1)), 200);
      const before = await tenant.request('GET', url(id));
      expectProblem(await tenant.request('PATCH', url(id), change(2), { 'if-match': stale }), 412, 'precondition_failed');
      const after = await tenant.request('GET', url(id));
      expect(after.json()).toEqual(before.json());
      expect(after.headers.etag).toBe(before.headers.etag);
    });

    it('a stale ETag is refused even when the PATCH would change nothing', async () => {
      const id = await create();
      const stale = String((await tenant.request('GET', url(id))).headers.etag);
      await must(tenant.request('PATCH', url(id), change(1)), 200);
      expectProblem(await tenant.request('PATCH', url(id), {}, { 'if-match': stale }), 412, 'precondition_failed');
    });

    it('`*` matches the current version', async () => {
      const id = await create();
      await must(tenant.request('PATCH', url(id), change(1)), 200);
      const response = await tenant.request('PATCH', url(id), change(2), { 'if-match': '*' });
      expect(response.statusCode).toBe(200);
    });

    it('a list of ETags matches when one of them is current', async () => {
      const id = await create();
      const etag = String((await tenant.request('GET', url(id))).headers.etag);
      expect((await tenant.request('PATCH', url(id), change(1), { 'if-match': `"old-one", ${etag}` })).statusCode).toBe(200);
    });

    it('another resource’s ETag does not match', async () => {
      const id = await create();
      const other = await create();
      const otherEtag = String((await tenant.request('GET', url(other))).headers.etag);
      expectProblem(await tenant.request('PATCH', url(id), change(1), { 'if-match': otherEtag }), 412, 'precondition_failed');
    });
  });

  it('a status change with a stale ETag is 412, not a transition', async () => {
    const bot = await agentIn('active');
    const stale = String((await read(bot.id)).headers.etag);
    await must(patch(bot.id, { description: 'moved on' }), 200);
    expectProblem(await patch(bot.id, { status: 'paused' }, { 'if-match': stale }), 412, 'precondition_failed');
    expect((await read(bot.id)).json().status).toBe('active');
  });
});

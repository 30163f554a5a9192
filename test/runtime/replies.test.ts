import { systemContext } from '../../src/lib/actor.js';
import { createIdleCloser } from '../../src/modules/runtime/idle-close.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import type { ReplyEngine, ReplyInput } from '../../src/modules/replies/engine.js';
import { eventually, makeActiveChatbot, startConversation, widget } from './support.js';

type Message = { id: string; role: string; content: string; author: { type: string; id: string | null } };

async function messagesOf(tenant: Tenant, id: string): Promise<Message[]> {
  return (await tenant.request('GET', `/api/v1/conversations/${id}/messages?limit=100`)).json().data;
}

/** An engine whose answers wait until the test opens the gate; it records what it was asked. */
function gatedEngine() {
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const calls: ReplyInput[] = [];
  const engine: ReplyEngine = {
    async reply(input) {
      calls.push(input);
      await gate;
      input.onDelta?.('Gated ');
      input.onDelta?.('answer.');
      return { content: 'Gated answer.', fallback: false, source: 'test', sources: [], outcome: 'answered', confidence: 1 };
    },
  };
  return {
    engine,
    calls,
    open: () => open(),
    close: () => (gate = new Promise<void>((resolve) => (open = resolve))),
  };
}

describe('API messages: durable agent replies', () => {
  let t: TestApp;
  let tenant: Tenant;
  let botId: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    botId = (await makeActiveChatbot(tenant)).id;
  });
  afterAll(async () => t.close());

  it('a role "user" message gets exactly one assistant answer, produced asynchronously', async () => {
    const { conversation_id: id } = await startConversation(t.app, botId);
    const sent = await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: 'Do you ship to Norway?' });
    expect(sent.statusCode).toBe(201);
    expect(sent.json().role).toBe('user');
    const answered = await eventually(async () => {
      const messages = await messagesOf(tenant, id);
      return messages.some((m) => m.role === 'assistant') ? messages : undefined;
    });
    expect(answered.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(answered[1]!.author).toEqual({ type: 'agent', id: botId });
    const job = await t.app.database.db.selectFrom('reply_jobs').selectAll().where('message_id', '=', sent.json().id).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ state: 'done', reply_message_id: answered[1]!.id });
    const audit = await t.app.database.db.selectFrom('audit_events').select(['actor_type', 'actor_id']).where('target_id', '=', answered[1]!.id).execute();
    expect(audit).toEqual([{ actor_type: 'system', actor_id: botId }]);
  });

  it('a role "operator" message switches to human mode and records no reply job', async () => {
    const { conversation_id: id } = await startConversation(t.app, botId);
    expect((await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { role: 'operator', content: 'Hi, I am Sam.' })).statusCode).toBe(201);
    expect((await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: 'Thanks Sam' })).statusCode).toBe(201);
    const jobs = await t.app.database.db.selectFrom('reply_jobs').select('id').where('conversation_id', '=', id).execute();
    expect(jobs).toEqual([]);
    expect((await messagesOf(tenant, id)).map((m) => m.role)).toEqual(['operator', 'user']);
  });
});

describe('reply jobs with a slow engine', () => {
  let t: TestApp;
  let tenant: Tenant;
  let botId: string;
  const gated = gatedEngine();

  beforeAll(async () => {
    t = await createTestApp({}, { replyEngine: gated.engine });
    tenant = await t.tenant();
    botId = (await makeActiveChatbot(tenant, { instructions: 'Answer briefly.' })).id;
  });
  afterAll(async () => {
    gated.open();
    await t.close();
  });

  it('an operator taking over while the engine works: the job ends without an answer', async () => {
    gated.close();
    const { conversation_id: id } = await startConversation(t.app, botId);
    const sent = await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: 'Hello' });
    await eventually(async () => (gated.calls.some((c) => c.transcript.at(-1)?.id === sent.json().id) ? true : undefined));
    const call = gated.calls.find((c) => c.transcript.at(-1)?.id === sent.json().id)!;
    expect(call.chatbot).toMatchObject({ id: botId, instructions: 'Answer briefly.' });
    expect(call.transcript.map((m) => m.content)).toEqual(['Hello']);
    expect((await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { role: 'operator', content: 'Taking over.' })).statusCode).toBe(201);
    gated.open();
    const job = await eventually(async () => {
      const row = await t.app.database.db.selectFrom('reply_jobs').selectAll().where('message_id', '=', sent.json().id).executeTakeFirst();
      return row?.state === 'done' ? row : undefined;
    });
    expect(job.reply_message_id).toBeNull();
    expect((await messagesOf(tenant, id)).map((m) => m.role)).toEqual(['user', 'operator']);
  });

  it('two runners racing for one job store one answer', async () => {
    gated.close();
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, botId);
    // The widget request answers inline; a second runner asks for the same job at the same time.
    const request = widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Race?' } });
    const message = await eventually(async () => (await messagesOf(tenant, id)).find((m) => m.role === 'user'));
    const second = t.app.runtime.worker.answerNow(tenant.workspaceId, message.id);
    const third = t.app.runtime.worker.answerNow(tenant.workspaceId, message.id);
    gated.open();
    const [response, other, another] = await Promise.all([request, second, third]);
    expect(response.statusCode).toBe(201);
    const reply = response.json().reply;
    expect(reply).toMatchObject({ role: 'assistant', content: 'Gated answer.' });
    expect(other).toMatchObject({ status: 'answered', reply: { id: reply.id } });
    expect(another).toMatchObject({ status: 'answered', reply: { id: reply.id } });
    expect((await messagesOf(tenant, id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('the transcript carries the recent messages, oldest first, ending with the one answered', async () => {
    gated.open();
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, botId);
    for (const content of ['one', 'two', 'three']) {
      expect((await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content } })).statusCode).toBe(201);
    }
    const last = gated.calls.at(-1)!;
    expect(last.transcript.map((m) => `${m.role}:${m.content}`)).toEqual([
      'user:one', 'assistant:Gated answer.', 'user:two', 'assistant:Gated answer.', 'user:three',
    ]);
  });
});

describe('reply jobs with a failing engine', () => {
  let t: TestApp;
  let tenant: Tenant;
  let failures = 1;
  const engine: ReplyEngine = {
    async reply() {
      if (failures > 0) {
        failures--;
        throw new Error('engine exploded');
      }
      return { content: 'Recovered answer.', fallback: false, source: 'test', sources: [], outcome: 'answered', confidence: 1 };
    },
  };

  beforeAll(async () => {
    t = await createTestApp({}, { replyEngine: engine });
    tenant = await t.tenant();
  });
  afterAll(async () => t.close());

  it('keeps the visitor message, reports the error on the stream, and retries the job until it answers', async () => {
    const botId = (await makeActiveChatbot(tenant)).id;
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, botId);
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Still there?' }, headers: { accept: 'text/event-stream' } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(/^event: message\n/);
    expect(response.body).toMatch(/event: error\n/);
    const answered = await eventually(async () => {
      const messages = await messagesOf(tenant, id);
      return messages.some((m) => m.role === 'assistant') ? messages : undefined;
    });
    expect(answered.map((m) => `${m.role}:${m.content}`)).toEqual(['user:Still there?', 'assistant:Recovered answer.']);
    const job = await t.app.database.db.selectFrom('reply_jobs').selectAll().where('conversation_id', '=', id).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ state: 'done', last_error: 'engine exploded' });
    expect(Number(job.attempts)).toBe(2);
  });
});

describe('idle close', () => {
  let t: TestApp;
  let tenant: Tenant;
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs), monotonicMs: () => performance.now() };

  beforeAll(async () => {
    t = await createTestApp({ runtime: { idleCloseMinutes: 30, pollIntervalMs: 100, leaseMs: 30_000, replyConcurrency: 4, replyDelayMs: 0 } }, { clock });
    tenant = await t.tenant();
  });
  afterAll(async () => t.close());

  it('closes conversations idle for longer than the limit (audited, counted); closed ones refuse messages with 409', async () => {
    const botId = (await makeActiveChatbot(tenant)).id;
    const idle = await startConversation(t.app, botId);
    expect((await widget(t.app, 'POST', `/widget/v1/conversations/${idle.conversation_id}/messages`, { token: idle.visitor_token, body: { content: 'hello' } })).statusCode).toBe(201);
    offsetMs += 20 * 60_000;
    const active = await startConversation(t.app, botId);
    expect(await t.app.runtime.sweepIdle()).toBe(0);
    offsetMs += 15 * 60_000;
    expect(await t.app.runtime.sweepIdle()).toBe(1);
    expect((await tenant.request('GET', `/api/v1/conversations/${idle.conversation_id}`)).json().status).toBe('closed');
    expect((await tenant.request('GET', `/api/v1/conversations/${active.conversation_id}`)).json().status).toBe('open');

    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${idle.conversation_id}/messages`, { token: idle.visitor_token, body: { content: 'back' } }), 409, 'conversation_closed');
    expectProblem(await tenant.request('POST', `/api/v1/conversations/${idle.conversation_id}/messages`, { content: 'back' }), 409, 'conversation_closed');
    const listed = await widget(t.app, 'GET', `/widget/v1/conversations/${idle.conversation_id}/messages`, { token: idle.visitor_token });
    expect(listed.statusCode).toBe(200);

    const audit = await t.app.database.db.selectFrom('audit_events').select(['action', 'actor_type', 'actor_id']).where('target_id', '=', idle.conversation_id).where('action', '=', 'conversation.closed').execute();
    expect(audit).toEqual([{ action: 'conversation.closed', actor_type: 'system', actor_id: 'idle-close' }]);
    const analytics = (await tenant.request('GET', '/api/v1/analytics')).json();
    expect(JSON.stringify(analytics)).toMatch(/"closed":1/);
  });

  it('a conversation that became active after the sweep looked is not closed (re-checked under the row lock)', async () => {
    const botId = (await makeActiveChatbot(tenant)).id;
    const started = await startConversation(t.app, botId);
    const staleCutoff = new Date(clock.now().getTime() - 60_000).toISOString(); // what a sweep saw a minute ago
    expect((await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { token: started.visitor_token, body: { content: 'still here' } })).statusCode).toBe(201);
    const ctx = systemContext(tenant.workspaceId, 'idle-close');
    const kept = await t.app.services.conversations.close(ctx, started.conversation_id, { idleBefore: staleCutoff });
    expect(kept.status).toBe('open');
    const later = new Date(clock.now().getTime() + 1000).toISOString();
    expect((await t.app.services.conversations.close(ctx, started.conversation_id, { idleBefore: later })).status).toBe('closed');
  });

  it('drains a backlog over several sweeps, at most maxPerSweep closes each', async () => {
    offsetMs += 31 * 60_000;
    await t.app.runtime.sweepIdle(); // what the tests above left open is idle now: closed first
    const botId = (await makeActiveChatbot(tenant)).id;
    const backlog = [];
    for (let i = 0; i < 5; i++) backlog.push(await startConversation(t.app, botId));
    offsetMs += 31 * 60_000;
    const infos: unknown[] = [];
    const log = { info: (object: object) => infos.push(object), warn: () => undefined, error: () => undefined };
    const closer = createIdleCloser({ db: t.app.database.db, clock, conversations: t.app.services.conversations, idleMinutes: 30, log, maxPerSweep: 2 });
    expect([await closer.sweep(), await closer.sweep(), await closer.sweep(), await closer.sweep()]).toEqual([2, 2, 1, 0]);
    expect(infos).toEqual([{ closed: 2 }, { closed: 2 }]);
    for (const conversation of backlog) {
      expect((await tenant.request('GET', `/api/v1/conversations/${conversation.conversation_id}`)).json().status).toBe('closed');
    }
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { startOpenAiServer, type OpenAiTestServer } from '../helpers/openai-server.js';
import { eventually, makeActiveChatbot, startConversation, widget } from './support.js';

type Message = { id: string; role: string; content: string };
const STOPPED = ['paused', 'archived'] as const;

// Point 1 of issue 29: an agent that was paused or archived stops talking in the conversations it already
// had: no visitor message, no lead, no provider call (the local OpenAI-compatible server counts them).
describe('paused and archived agents stop talking', () => {
  let t: TestApp;
  let tenant: Tenant;
  let provider: OpenAiTestServer;

  beforeAll(async () => {
    provider = await startOpenAiServer({ kind: 'answer', chunks: ['Paid ', 'answer.'] });
    const base = testConfig();
    // The background worker stays off until a test starts it: jobs recorded through /api/v1 stay pending.
    t = await createTestApp(
      { llm: { ...base.llm, provider: 'openai', model: 'test-model', openai: { baseUrl: provider.baseUrl, apiKey: 'sk-test' }, maxRetries: 0 } },
      { replyWorker: false },
    );
    tenant = await t.tenant();
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });
  beforeEach(() => {
    provider.requests.length = 0;
  });

  const messagesOf = async (id: string): Promise<Message[]> => (await tenant.request('GET', `/api/v1/conversations/${id}/messages?limit=100`)).json().data;
  const setStatus = async (botId: string, status: string) => expect((await tenant.request('PATCH', `/api/v1/chatbots/${botId}`, { status })).statusCode).toBe(200);

  it.each(STOPPED)('visitor messages (JSON and SSE) into a conversation of a %s agent: 409 chatbot_not_active, nothing stored, no provider call', async (status) => {
    const bot = await makeActiveChatbot(tenant);
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const answered = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Before the pause' } });
    expect(answered.statusCode, answered.body).toBe(201);
    expect(answered.json().reply.content).toBe('Paid answer.');
    expect(provider.requests).toHaveLength(1);

    await setStatus(bot.id, status);
    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'After the pause' } }), 409, 'chatbot_not_active');
    expectProblem(
      await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Streaming after the pause' }, headers: { accept: 'text/event-stream' } }),
      409,
      'chatbot_not_active',
    );
    expect(provider.requests).toHaveLength(1);
    expect((await messagesOf(id)).map((m) => m.content)).toEqual(['Before the pause', 'Paid answer.']);
    // The visitor can still read what was said.
    expect((await widget(t.app, 'GET', `/widget/v1/conversations/${id}/messages`, { token })).statusCode).toBe(200);
  });

  it.each(STOPPED)('lead submissions into a conversation of a %s agent: 409 chatbot_not_active, no lead captured', async (status) => {
    const bot = await makeActiveChatbot(tenant, { lead_capture: { enabled: true, fields: ['email'], prompt: null } });
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    await setStatus(bot.id, status);
    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${id}/lead`, { token, body: { email: 'late@example.com' } }), 409, 'chatbot_not_active');
    const conversation = (await tenant.request('GET', `/api/v1/conversations/${id}`)).json();
    expect(conversation.lead_id ?? null).toBeNull();
    const leads = (await tenant.request('GET', '/api/v1/leads?limit=100')).json().data as Array<{ email: string | null }>;
    expect(leads.map((lead) => lead.email)).not.toContain('late@example.com');
  });

  it.each(STOPPED)('/api/v1 role "user" messages into a conversation of a %s agent: 409 chatbot_not_active; "operator" messages still work', async (status) => {
    const bot = await makeActiveChatbot(tenant);
    const { conversation_id: id } = await startConversation(t.app, bot.id);
    await setStatus(bot.id, status);
    expectProblem(await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: 'Relayed visitor message' }), 409, 'chatbot_not_active');
    expectProblem(await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: 'Relayed again', role: 'user' }), 409, 'chatbot_not_active');
    const operator = await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: 'A human answers.', role: 'operator' });
    expect(operator.statusCode, operator.body).toBe(201);
    expect((await messagesOf(id)).map((m) => m.role)).toEqual(['operator']);
    const jobs = await t.app.database.db.selectFrom('reply_jobs').select('id').where('conversation_id', '=', id).execute();
    expect(jobs).toEqual([]);
    expect(provider.requests).toHaveLength(0);
  });

  it('the OpenAPI document declares 409 chatbot_not_active for POST /conversations/{id}/messages', async () => {
    const document = (await tenant.request('GET', '/api/v1/openapi')).json();
    const conflict = document.paths['/conversations/{id}/messages'].post.responses['409'];
    expect(conflict.description).toContain('chatbot_not_active');
  });

  it('reply jobs pending when the agent was paused or archived finish without calling the provider and store no answer', async () => {
    const live = await makeActiveChatbot(tenant);
    const paused = await makeActiveChatbot(tenant);
    const archived = await makeActiveChatbot(tenant);
    const ids: Record<string, string> = {};
    for (const [name, bot] of Object.entries({ live, paused, archived })) {
      const { conversation_id: id } = await startConversation(t.app, bot.id);
      ids[name] = id;
      expect((await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: `Question for the ${name} agent` })).statusCode).toBe(201);
    }
    await setStatus(paused.id, 'paused');
    await setStatus(archived.id, 'archived');

    t.app.runtime.worker.start();
    const jobsOf = (id: string) => t.app.database.db.selectFrom('reply_jobs').select(['state', 'reply_message_id', 'last_error']).where('conversation_id', '=', id).execute();
    await eventually(async () => {
      const states = await Promise.all(Object.values(ids).map(async (id) => (await jobsOf(id))[0]?.state));
      return states.every((state) => state === 'done') ? true : undefined;
    });

    // The live agent's job called the provider once (so the worker did run); the others never did.
    const asked = provider.requests.map((request) => JSON.stringify(request.body)).filter((body) => body.includes('Question for the'));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('Question for the live agent');
    expect((await messagesOf(ids.live!)).map((m) => m.content)).toEqual(['Question for the live agent', 'Paid answer.']);
    for (const name of ['paused', 'archived']) {
      expect((await messagesOf(ids[name]!)).map((m) => m.role)).toEqual(['user']);
      expect(await jobsOf(ids[name]!)).toEqual([{ state: 'done', reply_message_id: null, last_error: null }]);
    }
  });
});

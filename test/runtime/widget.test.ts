import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot, parseEvents, startConversation, widget } from './support.js';

describe('widget endpoints: the visitor flow', () => {
  let t: TestApp;
  let tenant: Tenant;
  let bot: { id: string; name: string };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    bot = await makeActiveChatbot(tenant, { welcome_message: 'Hello there!', lead_capture: { enabled: true, fields: ['name', 'email'], prompt: null } });
  });
  afterAll(async () => t.close());

  it('starts a conversation: token, welcome message, lead capture; audited as the visitor', async () => {
    const started = await startConversation(t.app, bot.id, { visitor: { name: 'Grace', email: 'grace@example.com' } });
    expect(started).toMatchObject({ welcome_message: 'Hello there!', chatbot: { id: bot.id, name: bot.name, lead_capture: { enabled: true, fields: ['name', 'email'] } } });
    expect(started.visitor_token).toMatch(/^vtk_/);
    const conversation = (await tenant.request('GET', `/api/v1/conversations/${started.conversation_id}`)).json();
    expect(conversation).toMatchObject({ channel: 'widget', status: 'open', mode: 'agent', visitor: { name: 'Grace', email: 'grace@example.com' } });
    const audit = await t.app.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor_type', 'actor_id', 'actor_name'])
      .where('workspace_id', '=', tenant.workspaceId)
      .where('target_id', '=', started.conversation_id)
      .execute();
    expect(audit).toEqual([{ action: 'conversation.created', actor_type: 'visitor', actor_id: conversation.visitor.id, actor_name: 'Grace' }]);
  });

  it('starts without a body; unknown agent 404, draft agent 409 chatbot_not_active', async () => {
    const response = await widget(t.app, 'POST', `/widget/v1/chatbots/${bot.id}/conversations`);
    expect(response.statusCode, response.body).toBe(201);
    expectProblem(await widget(t.app, 'POST', '/widget/v1/chatbots/bot_01ARZ3NDEKTSV4RRFFQ69G5FAV/conversations', { body: {} }), 404, 'not_found');
    expectProblem(await widget(t.app, 'POST', '/widget/v1/chatbots/nonsense/conversations', { body: {} }), 404, 'not_found');
    const draft = await makeChatbot(tenant);
    expectProblem(await widget(t.app, 'POST', `/widget/v1/chatbots/${draft.id}/conversations`, { body: {} }), 409, 'chatbot_not_active');
    expectProblem(await widget(t.app, 'POST', `/widget/v1/chatbots/${bot.id}/conversations`, { body: { visitor: { email: 'not-an-email' } } }), 400, 'validation_failed');
  });

  it('a message gets the stored answer (JSON), and both appear through /api/v1', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'What are your opening hours?' } });
    expect(response.statusCode, response.body).toBe(201);
    const { message, reply } = response.json();
    expect(message).toMatchObject({ object: 'message', conversation_id: id, role: 'user', content: 'What are your opening hours?', author: { type: 'visitor' } });
    expect(reply).toMatchObject({ object: 'message', conversation_id: id, role: 'assistant', author: { type: 'agent', id: bot.id } });
    expect(reply.content.length).toBeGreaterThan(0);
    const listed = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json();
    expect(listed.data.map((m: { id: string }) => m.id)).toEqual([message.id, reply.id]);
    const visitorList = await widget(t.app, 'GET', `/widget/v1/conversations/${id}/messages`, { token });
    expect(visitorList.statusCode).toBe(200);
    expect(visitorList.json().data.map((m: { id: string }) => m.id)).toEqual([message.id, reply.id]);
  });

  it('streams the answer as server-sent events: message, deltas, reply', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Hi!' }, headers: { accept: 'text/event-stream' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseEvents(response.body);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('message');
    expect(names.at(-1)).toBe('reply');
    const deltas = events.filter((e) => e.event === 'delta').map((e) => (e.data as { text: string }).text);
    expect(deltas.length).toBeGreaterThan(0);
    const reply = events.at(-1)!.data as { content: string; role: string };
    expect(reply.role).toBe('assistant');
    expect(deltas.join('')).toBe(reply.content);
    const listed = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json();
    expect(listed.data.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
  });

  it('takes a lead once per conversation: created, then updated; linked and visible through /api/v1', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const first = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/lead`, { token, body: { name: 'Ada', email: 'Ada@Example.com' } });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ object: 'lead', source: 'widget', conversation_id: id, chatbot_id: bot.id, name: 'Ada', email: 'ada@example.com' });
    const second = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/lead`, { token, body: { phone: '+44 20 7946 0958' } });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ id: first.json().id, phone: '+44 20 7946 0958', email: 'ada@example.com' });
    const leads = (await tenant.request('GET', `/api/v1/leads?conversation_id=${id}`)).json();
    expect(leads.data).toHaveLength(1);
    expect((await tenant.request('GET', `/api/v1/conversations/${id}`)).json().lead_id).toBe(first.json().id);
    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${id}/lead`, { token, body: { email: 'nope' } }), 400, 'validation_failed');
    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${id}/lead`, { token, body: {} }), 400, 'validation_failed');
  });

  it('human mode: after an operator message the agent stays silent (reply null, SSE ends after message)', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const operator = await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { role: 'operator', content: 'A human here.' });
    expect(operator.statusCode).toBe(201);
    expect((await tenant.request('GET', `/api/v1/conversations/${id}`)).json().mode).toBe('human');
    const json = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Hello?' } });
    expect(json.statusCode).toBe(201);
    expect(json.json().reply).toBeNull();
    const sse = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Anyone?' }, headers: { accept: 'text/event-stream' } });
    expect(parseEvents(sse.body).map((e) => e.event)).toEqual(['message']);
    const roles = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json().data.map((m: { role: string }) => m.role);
    expect(roles).toEqual(['operator', 'user', 'user']);
  });

  it('serves its own OpenAPI document at /widget/v1/openapi', async () => {
    const response = await widget(t.app, 'GET', '/widget/v1/openapi');
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/chatbots/{chatbot_id}/conversations', '/conversations/{conversation_id}/messages', '/conversations/{conversation_id}/lead']));
    expect(document.components.securitySchemes.visitorToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const api = (await tenant.request('GET', '/api/v1/openapi')).json();
    expect(Object.keys(api.paths).some((p) => p.includes('widget'))).toBe(false);
  });
});

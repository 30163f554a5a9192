import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handoffAnswer } from '../../src/modules/replies/answers.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot, parseEvents, startConversation, widget } from './support.js';

// Issue 31 on the widget's side, with the default (builtin) provider: sources on answers, the visitor's
// rating of an answer, and the request for a person.

type Message = { id: string; role: string; content: string; sources: { source_id: string; document_id: string; title: string; url: string | null }[]; feedback: unknown };

const LEAD_CAPTURE = { enabled: true, fields: ['email'], prompt: null };

describe('answers: sources, feedback, handoff', () => {
  let t: TestApp;
  let tenant: Tenant;
  let bot: { id: string; name: string };
  let sourceId: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    bot = await makeActiveChatbot(tenant, {
      lead_capture: LEAD_CAPTURE,
      suggested_questions: ['What are your opening hours?', 'Where are you?'],
      language: 'en',
      allowed_origins: ['https://shop.example'],
    });
    const source = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, {
      type: 'text',
      title: 'Opening hours',
      content: 'The bakery is open from 7am to 6pm, Monday to Saturday. On Sundays the bakery is closed.',
    });
    expect(source.statusCode, source.body).toBe(201);
    sourceId = source.json().id;
  });
  afterAll(async () => t.close());

  async function ask(content: string) {
    const started = await startConversation(t.app, bot.id);
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { token: started.visitor_token, body: { content } });
    expect(response.statusCode, response.body).toBe(201);
    const { message, reply } = response.json() as { message: Message; reply: Message };
    return { ...started, message, reply };
  }

  it('starts a conversation with the agent\'s language and suggested questions', async () => {
    const started = await startConversation(t.app, bot.id);
    expect(started.chatbot).toMatchObject({ id: bot.id, language: 'en', suggested_questions: ['What are your opening hours?', 'Where are you?'] });
  });

  it('an answer from a text source carries that source: in the widget answer, /api/v1 and the final streamed event', async () => {
    const { conversation_id: id, visitor_token: token, message, reply } = await ask('When is the bakery open?');
    expect(message.sources).toEqual([]);
    expect(message.feedback).toBeNull();
    expect(reply.sources).toHaveLength(1);
    expect(reply.sources[0]).toMatchObject({ source_id: sourceId, title: 'Opening hours', url: null });
    expect(reply.sources[0]!.document_id).toMatch(/^doc_/);
    expect(reply.feedback).toBeNull();

    const listed = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json() as { data: Message[] };
    expect(listed.data.map((m) => m.sources)).toEqual([[], reply.sources]);

    const streamed = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Is the bakery open on Saturday?' }, headers: { accept: 'text/event-stream' } });
    const events = parseEvents(streamed.body);
    expect(events.at(-1)!.event).toBe('reply');
    expect((events.at(-1)!.data as Message).sources).toEqual(reply.sources);
    expect((events[0]!.data as Message).sources).toEqual([]);
  });

  it('rates an answer: up, then down with a comment replaces it; shown on the message; audited as the visitor', async () => {
    const { conversation_id: id, visitor_token: token, reply } = await ask('When is the bakery open?');
    const url = `/widget/v1/conversations/${id}/messages/${reply.id}/feedback`;
    const up = await widget(t.app, 'POST', url, { token, body: { rating: 'up' } });
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json()).toMatchObject({ id: reply.id, role: 'assistant', sources: reply.sources, feedback: { rating: 'up', comment: null } });

    const down = await widget(t.app, 'POST', url, { token, body: { rating: 'down', comment: 'Not what I asked.' } });
    expect(down.statusCode, down.body).toBe(200);
    const rated = down.json() as { feedback: { rating: string; comment: string; updated_at: string } };
    expect(rated.feedback).toMatchObject({ rating: 'down', comment: 'Not what I asked.' });
    expect(rated.feedback.updated_at > (up.json() as typeof rated).feedback.updated_at).toBe(true);

    const listed = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json() as { data: Message[] };
    expect(listed.data.find((m) => m.id === reply.id)!.feedback).toEqual(rated.feedback);
    const visitorList = (await widget(t.app, 'GET', `/widget/v1/conversations/${id}/messages`, { token })).json() as { data: Message[] };
    expect(visitorList.data.find((m) => m.id === reply.id)!.feedback).toEqual(rated.feedback);

    const conversation = (await tenant.request('GET', `/api/v1/conversations/${id}`)).json() as { visitor: { id: string } };
    const audit = await t.app.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor_type', 'actor_id', 'changes'])
      .where('workspace_id', '=', tenant.workspaceId)
      .where('target_id', '=', reply.id)
      .where('action', '=', 'message.rated')
      .orderBy('seq')
      .execute();
    expect(audit.map((e) => [e.action, e.actor_type, e.actor_id])).toEqual([
      ['message.rated', 'visitor', conversation.visitor.id],
      ['message.rated', 'visitor', conversation.visitor.id],
    ]);
    expect(JSON.parse(audit[1]!.changes)).toEqual({ rating: { before: 'up', after: 'down' }, comment: { before: null, after: 'Not what I asked.' } });
  });

  it('refuses to rate what is not one of this conversation\'s answers: 404; a bad rating 400; no token 401', async () => {
    const mine = await ask('When is the bakery open?');
    const other = await ask('Are you open on Sundays?');
    const rate = (messageId: string, body: unknown, token: string | null = mine.visitor_token) =>
      widget(t.app, 'POST', `/widget/v1/conversations/${mine.conversation_id}/messages/${messageId}/feedback`, { ...(token ? { token } : {}), body });
    expectProblem(await rate(other.reply.id, { rating: 'up' }), 404, 'not_found');
    expectProblem(await rate(mine.message.id, { rating: 'up' }), 404, 'not_found');
    expectProblem(await rate('msg_01ARZ3NDEKTSV4RRFFQ69G5FAV', { rating: 'up' }), 404, 'not_found');
    expectProblem(await rate('nonsense', { rating: 'up' }), 404, 'not_found');
    expectProblem(await rate(mine.reply.id, { rating: 'meh' }), 400, 'validation_failed');
    expectProblem(await rate(mine.reply.id, { rating: 'up', comment: 'x'.repeat(1001) }), 400, 'validation_failed');
    expectProblem(await rate(mine.reply.id, { rating: 'up', extra: true }), 400, 'validation_failed');
    expectProblem(await rate(mine.reply.id, { rating: 'up' }, null), 401, 'invalid_visitor_token');
    // The other conversation's token does not open this conversation.
    expectProblem(await rate(mine.reply.id, { rating: 'up' }, other.visitor_token), 404, 'not_found');
    const rows = await t.app.database.db.selectFrom('message_feedback').select('message_id').where('message_id', 'in', [mine.reply.id, other.reply.id, mine.message.id]).execute();
    expect(rows).toEqual([]);
  });

  it('asks for a person: sets the time, the agent says so and asks for contact details; idempotent; audited', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const url = `/widget/v1/conversations/${id}/handoff`;
    const first = await widget(t.app, 'POST', url, { token });
    expect(first.statusCode, first.body).toBe(200);
    const body = first.json() as { handoff_requested_at: string; reply: Message };
    expect(body.handoff_requested_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const leadCapture = JSON.stringify(LEAD_CAPTURE);
    expect(body.reply).toMatchObject({ role: 'assistant', author: { type: 'agent', id: bot.id }, sources: [], feedback: null });
    expect(body.reply.content).toBe(handoffAnswer({ lead_capture: leadCapture }, false, 'en'));
    expect(body.reply.content).not.toBe(handoffAnswer({ lead_capture: leadCapture }, true, 'en'));

    const again = await widget(t.app, 'POST', url, { token, body: {} });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ handoff_requested_at: body.handoff_requested_at, reply: null });

    const conversation = (await tenant.request('GET', `/api/v1/conversations/${id}`)).json();
    expect(conversation).toMatchObject({ handoff_requested_at: body.handoff_requested_at, message_count: 1, mode: 'agent' });
    const audit = await t.app.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor_type'])
      .where('workspace_id', '=', tenant.workspaceId)
      .where('target_id', '=', id)
      .where('action', '=', 'conversation.handoff_requested')
      .execute();
    expect(audit).toEqual([{ action: 'conversation.handoff_requested', actor_type: 'visitor' }]);
    expectProblem(await widget(t.app, 'POST', url, { token, body: { urgent: true } }), 400, 'validation_failed');
  });

  it('asks for a person with contact details known: the answer does not ask for them', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id, { visitor: { email: 'ada@example.com' } });
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/handoff`, { token });
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as { reply: Message }).reply.content).toBe(handoffAnswer({ lead_capture: JSON.stringify(LEAD_CAPTURE) }, true, 'en'));
  });

  it('asked for a person in words, the agent asks for contact details only when none are known', async () => {
    const anonymous = await ask('Can I speak to a human?');
    expect(anonymous.reply.content).toBe(handoffAnswer({ lead_capture: JSON.stringify(LEAD_CAPTURE) }, false, 'en'));
    const started = await startConversation(t.app, bot.id, { visitor: { email: 'grace@example.com' } });
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { token: started.visitor_token, body: { content: 'Can I speak to a human?' } });
    expect(response.statusCode, response.body).toBe(201);
    expect((response.json() as { reply: Message }).reply.content).toBe(handoffAnswer({ lead_capture: JSON.stringify(LEAD_CAPTURE) }, true, 'en'));
  });

  it('answers CORS preflights of the new routes like the others', async () => {
    const { conversation_id: id } = await startConversation(t.app, bot.id);
    for (const url of [`/widget/v1/conversations/${id}/handoff`, `/widget/v1/conversations/${id}/messages/msg_01ARZ3NDEKTSV4RRFFQ69G5FAV/feedback`]) {
      const allowed = await widget(t.app, 'OPTIONS', url, { origin: 'https://shop.example', headers: { 'access-control-request-method': 'POST' } });
      expect(allowed.statusCode, url).toBe(204);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://shop.example');
      // Issue 33 §4: another origin's preflight is answered too; the request itself is refused, readably.
      const other = await widget(t.app, 'OPTIONS', url, { origin: 'https://evil.example', headers: { 'access-control-request-method': 'POST' } });
      expect(other.statusCode, url).toBe(204);
      expectProblem(await widget(t.app, 'POST', url, { origin: 'https://evil.example', body: {} }), 403, 'origin_not_allowed');
    }
  });
});

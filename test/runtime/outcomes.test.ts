import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeActiveChatbot, parseEvents, startConversation, widget } from './support.js';

// Every agent answer says what kind of turn it was (`outcome`), the same in the three places a client reads
// it: /api/v1 message objects, the widget's JSON answer and the final streamed `reply` event.

type Message = { id: string; role: string; content: string; outcome: string | null; sources: { title: string; url: string | null }[] };

describe('outcome of agent answers', () => {
  let t: TestApp;
  let tenant: Tenant;
  let bot: { id: string };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    bot = await makeActiveChatbot(tenant, { language: 'en' });
    const source = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, {
      type: 'text',
      title: 'Opening hours',
      content: 'The bakery is open from 7am to 6pm, Monday to Saturday. On Sundays the bakery is closed.',
    });
    expect(source.statusCode, source.body).toBe(201);
  });
  afterAll(async () => t.close());

  async function exchange(content: string, stream: boolean) {
    const started = await startConversation(t.app, bot.id);
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, {
      token: started.visitor_token, body: { content }, ...(stream ? { headers: { accept: 'text/event-stream' } } : {}),
    });
    if (!stream) {
      expect(response.statusCode, response.body).toBe(201);
      return { id: started.conversation_id, ...(response.json() as { message: Message; reply: Message }) };
    }
    expect(response.statusCode, response.body).toBe(200);
    const events = parseEvents(response.body);
    expect(events.at(-1)!.event).toBe('reply');
    return { id: started.conversation_id, message: events[0]!.data as Message, reply: events.at(-1)!.data as Message };
  }

  async function apiMessages(conversationId: string): Promise<Message[]> {
    const listed = await tenant.request('GET', `/api/v1/conversations/${conversationId}/messages`);
    expect(listed.statusCode, listed.body).toBe(200);
    return (listed.json() as { data: Message[] }).data;
  }

  for (const [question, outcome] of [
    ['When is the bakery open on Saturday?', 'answered'],
    ['Do you sell helicopters?', 'unanswered'],
    ['Thanks a lot!', 'conversational'],
    ['Can I talk to a real person?', 'handoff'],
  ] as const) {
    it(`"${question}" is ${outcome}: in the widget's JSON answer, the final streamed event and /api/v1`, async () => {
      const json = await exchange(question, false);
      expect(json.message.outcome).toBeNull();
      expect(json.reply.outcome).toBe(outcome);
      const streamed = await exchange(question, true);
      expect(streamed.message.outcome).toBeNull();
      expect(streamed.reply.outcome).toBe(outcome);
      for (const { id, reply } of [json, streamed]) {
        const messages = await apiMessages(id);
        expect(messages.map((message) => [message.role, message.outcome])).toEqual([['user', null], ['assistant', outcome]]);
        expect(messages[1]!.id).toBe(reply.id);
      }
    });
  }

  it('an agent message stored without an outcome (an older answer) reads as null', async () => {
    const started = await startConversation(t.app, bot.id);
    const ctx = systemContext(tenant.workspaceId, 'test');
    await t.app.services.messages.append(ctx, started.conversation_id, { role: 'assistant', content: 'An older answer.', author: { type: 'agent', id: bot.id } });
    const messages = await apiMessages(started.conversation_id);
    expect(messages.map((message) => [message.role, message.outcome])).toEqual([['assistant', null]]);
  });
});

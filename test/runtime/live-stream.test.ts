import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { openSse, type SseEvent } from '../helpers/sse.js';
import { makeActiveChatbot, startConversation } from './support.js';

// The widget's live stream (issue 32): GET /widget/v1/conversations/{id}/events over real HTTP.

describe('widget conversation stream', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let chatbotId: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    chatbotId = (await makeActiveChatbot(tenant, { name: 'Live agent' })).id;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await t.close();
  });

  const isMessage = (content: string) => (event: SseEvent) => event.event === 'message' && (event.data as { content: string }).content === content;
  const operatorSays = async (conversationId: string, content: string) => {
    const response = await tenant.request('POST', `/api/v1/conversations/${conversationId}/messages`, { role: 'operator', content });
    expect(response.statusCode).toBe(201);
    return response.json() as { id: string };
  };

  it('an operator reply reaches the open stream without the visitor sending anything', async () => {
    const started = await startConversation(t.app, chatbotId);
    const stream = await openSse(`${base}/widget/v1/conversations/${started.conversation_id}/events`, { authorization: `Bearer ${started.visitor_token}` });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.waitFor((event) => event.event === 'ready');

    const sent = await operatorSays(started.conversation_id, 'Hello, this is Sam from the shop.');
    const received = await stream.waitFor(isMessage('Hello, this is Sam from the shop.'));
    expect(received.data).toMatchObject({ id: sent.id, role: 'operator', conversation_id: started.conversation_id });
    expect(Number(received.id)).toBeGreaterThan(0);
    // The operator took over: the conversation's mode change follows, without the visitor's details.
    const update = await stream.waitFor((event) => event.event === 'conversation');
    expect(update.data).toEqual({ id: started.conversation_id, status: 'open', mode: 'human', handoff_requested_at: null });
    stream.close();
  });

  it('a stream gets only its own conversation\'s events', async () => {
    const mine = await startConversation(t.app, chatbotId);
    const other = await startConversation(t.app, chatbotId);
    const stream = await openSse(`${base}/widget/v1/conversations/${mine.conversation_id}/events`, { authorization: `Bearer ${mine.visitor_token}` });
    await stream.waitFor((event) => event.event === 'ready');
    await operatorSays(other.conversation_id, 'For the other visitor');
    await operatorSays(mine.conversation_id, 'For you');
    await stream.waitFor(isMessage('For you'));
    expect(stream.events.filter((event) => event.event === 'message').map((event) => (event.data as { content: string }).content)).toEqual(['For you']);
    stream.close();
  });

  it('a stream resumed with Last-Event-ID receives exactly what it missed', async () => {
    const started = await startConversation(t.app, chatbotId);
    const url = `${base}/widget/v1/conversations/${started.conversation_id}/events`;
    const auth = { authorization: `Bearer ${started.visitor_token}` };
    const first = await openSse(url, auth);
    await first.waitFor((event) => event.event === 'ready');
    await operatorSays(started.conversation_id, 'one');
    const seen = await first.waitFor(isMessage('one'));
    await first.waitFor((event) => event.event === 'conversation');
    first.close();
    await first.ended;

    await operatorSays(started.conversation_id, 'two');
    await operatorSays(started.conversation_id, 'three');
    // Resumed after "one": "two" and "three", in order, then live again.
    const resumed = await openSse(url, { ...auth, 'last-event-id': seen.id! });
    const ready = await resumed.waitFor((event) => event.event === 'ready');
    const missed = resumed.events.slice(0, resumed.events.indexOf(ready));
    expect(missed.map((event) => [event.event, (event.data as { content?: string }).content])).toEqual([
      ['conversation', undefined],
      ['message', 'two'],
      ['message', 'three'],
    ]);
    const ids = missed.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(Number(ready.id)).toBeGreaterThanOrEqual(ids.at(-1)!);
    await operatorSays(started.conversation_id, 'four');
    await resumed.waitFor(isMessage('four'));
    expect(resumed.events.filter((event) => event.event === 'message')).toHaveLength(3);
    resumed.close();
  });

  it('refuses a missing or foreign visitor token', async () => {
    const mine = await startConversation(t.app, chatbotId);
    const other = await startConversation(t.app, chatbotId);
    const url = `${base}/widget/v1/conversations/${mine.conversation_id}/events`;
    const none = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/problem\+json/);
    const foreign = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${other.visitor_token}` } });
    expect(foreign.status).toBe(404);
  });
});

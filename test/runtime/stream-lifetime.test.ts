import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/dashboard.js';
import { openSse, type SseClient, type SseEvent } from '../helpers/sse.js';
import { makeActiveChatbot, startConversation } from './support.js';

// Every live stream is ended by the server after STREAM_MAX_MINUTES (here a few seconds, through the config
// object), so long-lived connections are recycled; the client reconnects with Last-Event-ID and misses nothing.

const MAX_MS = 3000;

describe('live stream lifetime', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let chatbotId: string;

  beforeAll(async () => {
    t = await createTestApp({ streams: { perIp: 20, perConversation: 5, maxMs: MAX_MS } });
    tenant = await t.tenant();
    chatbotId = (await makeActiveChatbot(tenant, { name: 'Recycled agent' })).id;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const isMessage = (content: string) => (event: SseEvent) => event.event === 'message' && (event.data as { content: string }).content === content;
  const operatorSays = async (conversationId: string, content: string) => {
    const response = await tenant.request('POST', `/api/v1/conversations/${conversationId}/messages`, { role: 'operator', content });
    expect(response.statusCode).toBe(201);
  };
  const lastId = (stream: SseClient) => stream.events.filter((event) => event.id !== undefined).at(-1)!.id!;

  /** Waits until the server ends `stream` (the test never closes it) and returns how long it lived, from before it was opened. */
  async function lifetimeOf(stream: SseClient, openedAt: number): Promise<number> {
    await stream.ended;
    return performance.now() - openedAt;
  }

  it('ends the visitor\'s stream after the maximum; the reconnect with Last-Event-ID receives what was written in between', { timeout: 30_000 }, async () => {
    const started = await startConversation(t.app, chatbotId);
    const url = `${base}/widget/v1/conversations/${started.conversation_id}/events`;
    const auth = { authorization: `Bearer ${started.visitor_token}` };
    const openedAt = performance.now();
    const first = await openSse(url, auth);
    expect(first.status).toBe(200);
    await first.waitFor((event) => event.event === 'ready');
    await operatorSays(started.conversation_id, 'before the end');
    await first.waitFor(isMessage('before the end'));
    await first.waitFor((event) => event.event === 'conversation');

    // Ended by the server (at most MAX_MS, not before its last tenth), not by the client.
    const lived = await lifetimeOf(first, openedAt);
    expect(lived).toBeGreaterThanOrEqual(MAX_MS * 0.9);
    expect(lived).toBeLessThan(MAX_MS + 10_000);

    // Written while the visitor was away: the reconnect gets exactly these, before it is live again.
    await operatorSays(started.conversation_id, 'while away, one');
    await operatorSays(started.conversation_id, 'while away, two');
    const second = await openSse(url, { ...auth, 'last-event-id': lastId(first) });
    expect(second.status).toBe(200);
    const ready = await second.waitFor((event) => event.event === 'ready');
    const missed = second.events.slice(0, second.events.indexOf(ready));
    expect(missed.map((event) => [event.event, (event.data as { content?: string }).content])).toEqual([
      ['message', 'while away, one'],
      ['message', 'while away, two'],
    ]);
    // And it is live, and recycled in its turn.
    await operatorSays(started.conversation_id, 'after the reconnect');
    await second.waitFor(isMessage('after the reconnect'));
    await second.ended;
  });

  it('ends the dashboard\'s stream after the maximum too; its reconnect misses nothing', { timeout: 30_000 }, async () => {
    const user = await signUp(t.app, { workspaceName: 'Recycled inbox' });
    const bot = (await user.request('POST', '/app/api/chatbots', { name: 'Desk', instructions: 'Help.' })).json() as { id: string };
    expect((await user.request('PATCH', `/app/api/chatbots/${bot.id}`, { status: 'active' })).statusCode).toBe(200);
    const openedAt = performance.now();
    const first = await openSse(`${base}/app/api/events`, { cookie: user.cookie });
    expect(first.status).toBe(200);
    await first.waitFor((event) => event.event === 'ready');
    expect(await lifetimeOf(first, openedAt)).toBeGreaterThanOrEqual(MAX_MS * 0.9);

    const started = await startConversation(t.app, bot.id);
    const second = await openSse(`${base}/app/api/events`, { cookie: user.cookie, 'last-event-id': lastId(first) });
    const ready = await second.waitFor((event) => event.event === 'ready');
    const missed = second.events.slice(0, second.events.indexOf(ready));
    expect(missed.map((event) => [event.event, (event.data as { data: { id: string } }).data.id])).toEqual([['conversation.created', started.conversation_id]]);
    second.close();
  });
});

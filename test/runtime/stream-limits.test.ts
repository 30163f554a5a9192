import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { makeActiveChatbot, startConversation } from './support.js';

// The live event streams are bounded per client address (IPv6 by /64) and per visitor conversation, on each
// instance: beyond, 429 `too_many_streams` with Retry-After before the stream opens; a closed stream gives its
// place back. The client address comes from X-Forwarded-For (TRUST_PROXY=1), as behind a reverse proxy.

const PER_IP = 3;
const PER_CONVERSATION = 2;

type Started = Awaited<ReturnType<typeof startConversation>>;

describe('live stream limits', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let chatbotId: string;
  const open: SseClient[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      trustProxy: 1,
      streams: { perIp: PER_IP, perConversation: PER_CONVERSATION, maxMs: 60 * 60_000 },
      widget: { ratePerIpPerMinute: 100_000, messagesPerConversationPerMinute: 100 },
    });
    tenant = await t.tenant();
    chatbotId = (await makeActiveChatbot(tenant, { name: 'Bounded agent' })).id;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    for (const stream of open) stream.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const eventsUrl = (conversation: Started) => `${base}/widget/v1/conversations/${conversation.conversation_id}/events`;
  const headersFor = (conversation: Started, from: string) => ({ authorization: `Bearer ${conversation.visitor_token}`, 'x-forwarded-for': from });

  /** Opens the conversation's stream from `from` and waits until it is live. */
  async function follow(conversation: Started, from: string): Promise<SseClient> {
    const stream = await openSse(eventsUrl(conversation), headersFor(conversation, from));
    expect(stream.status).toBe(200);
    open.push(stream);
    await stream.waitFor((event) => event.event === 'ready');
    return stream;
  }

  /** A refused attempt: the problem, its Retry-After and the policy it names. */
  async function refusal(url: string, headers: Record<string, string>) {
    // A stream opened instead of refused would never end: the time limit makes that a failure, not a hang.
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: AbortSignal.timeout(10_000) });
    const problem = expectProblem({ statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() }, 429, 'too_many_streams');
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter > 0).toBe(true);
    return problem['violated-policies'];
  }

  /** Opens a stream once a place is free again: the server hears of a client's close a moment after it happens. */
  async function followOnceFree(conversation: Started, from: string): Promise<SseClient> {
    let stream: SseClient | null = null;
    await expect
      .poll(async () => {
        const attempt = await openSse(eventsUrl(conversation), headersFor(conversation, from));
        if (attempt.status === 200) stream = attempt;
        else attempt.close();
        return attempt.status;
      }, { timeout: 10_000 })
      .toBe(200);
    open.push(stream!);
    await stream!.waitFor((event) => event.event === 'ready');
    return stream!;
  }

  it('an IPv6 /64 holds at most STREAMS_PER_IP streams; another /64 is not refused; a closed stream frees a place', async () => {
    const conversations = await Promise.all(Array.from({ length: PER_IP + 2 }, () => startConversation(t.app, chatbotId)));
    // Three different addresses of one /64 share its budget.
    const neighbours = ['2001:db8:7:1::1', '2001:db8:7:1::2', '2001:db8:7:1:aaaa:bbbb:cccc:dddd'];
    const streams = [];
    for (const [i, address] of neighbours.entries()) streams.push(await follow(conversations[i]!, address));
    expect(await refusal(eventsUrl(conversations[PER_IP]!), headersFor(conversations[PER_IP]!, '2001:db8:7:1:ffff:ffff:ffff:ffff'))).toEqual(['streams_per_ip']);
    // The same host written another way is the same /64.
    expect(await refusal(eventsUrl(conversations[PER_IP]!), headersFor(conversations[PER_IP]!, '2001:0DB8:0007:0001:0:0:0:9'))).toEqual(['streams_per_ip']);

    // The next /64 has its own budget.
    await follow(conversations[PER_IP + 1]!, '2001:db8:7:2::1');

    // The streams still open go on receiving; closing one lets a neighbour in.
    streams[0]!.close();
    await streams[0]!.ended;
    await followOnceFree(conversations[PER_IP]!, '2001:db8:7:1::99');
    expect(await refusal(eventsUrl(conversations[0]!), headersFor(conversations[0]!, '2001:db8:7:1::1'))).toEqual(['streams_per_ip']);
  });

  it('an IPv4 address and its IPv4-mapped IPv6 form share one budget', async () => {
    const conversations = await Promise.all(Array.from({ length: PER_IP + 1 }, () => startConversation(t.app, chatbotId)));
    await follow(conversations[0]!, '198.51.100.20');
    await follow(conversations[1]!, '::ffff:198.51.100.20');
    await follow(conversations[2]!, '198.51.100.20');
    expect(await refusal(eventsUrl(conversations[3]!), headersFor(conversations[3]!, '::ffff:c633:6414'))).toEqual(['streams_per_ip']);
    await follow(conversations[3]!, '198.51.100.21');
  });

  it('a conversation holds at most STREAMS_PER_CONVERSATION streams, whatever their addresses', async () => {
    const [mine, other] = await Promise.all([startConversation(t.app, chatbotId), startConversation(t.app, chatbotId)]);
    const first = await follow(mine!, '203.0.113.1');
    await follow(mine!, '203.0.113.2');
    expect(await refusal(eventsUrl(mine!), headersFor(mine!, '203.0.113.3'))).toEqual(['streams_per_conversation']);
    // Another conversation, from the same address, is not refused.
    await follow(other!, '203.0.113.3');

    first.close();
    await first.ended;
    const again = await followOnceFree(mine!, '203.0.113.3');
    // The stream let in is live: an operator's reply reaches it.
    const sent = await tenant.request('POST', `/api/v1/conversations/${mine!.conversation_id}/messages`, { role: 'operator', content: 'Still here' });
    expect(sent.statusCode).toBe(201);
    await again.waitFor((event) => event.event === 'message' && (event.data as { content: string }).content === 'Still here');
  });

  it('the dashboard\'s stream counts against its address too', async () => {
    const user = await signUp(t.app, { workspaceName: 'Busy office' });
    const conversation = await startConversation(t.app, chatbotId);
    const from = '2001:db8:99:5::10';
    const dashboard = (address: string) => openSse(`${base}/app/api/events`, { cookie: user.cookie, 'x-forwarded-for': address });
    for (let i = 0; i < PER_IP - 1; i++) {
      const stream = await dashboard(from);
      expect(stream.status).toBe(200);
      open.push(stream);
      await stream.waitFor((event) => event.event === 'ready');
    }
    await follow(conversation, '2001:db8:99:5::11');
    expect(await refusal(`${base}/app/api/events`, { cookie: user.cookie, 'x-forwarded-for': '2001:db8:99:5::12' })).toEqual(['streams_per_ip']);
    expect(await refusal(eventsUrl(conversation), headersFor(conversation, from))).toEqual(['streams_per_ip']);
  });

  it('a refused stream leaves nothing behind: the refusals themselves hold no place', async () => {
    const conversations = await Promise.all(Array.from({ length: PER_IP + 1 }, () => startConversation(t.app, chatbotId)));
    const from = '192.0.2.77';
    const streams = [];
    for (let i = 0; i < PER_IP; i++) streams.push(await follow(conversations[i]!, from));
    for (let i = 0; i < 5; i++) await refusal(eventsUrl(conversations[PER_IP]!), headersFor(conversations[PER_IP]!, from));
    for (const stream of streams) stream.close();
    await Promise.all(streams.map((stream) => stream.ended));
    // Every place is free again: PER_IP streams open, not one fewer.
    await followOnceFree(conversations[0]!, from);
    for (let i = 1; i < PER_IP; i++) await followOnceFree(conversations[i]!, from);
    expect(await refusal(eventsUrl(conversations[PER_IP]!), headersFor(conversations[PER_IP]!, from))).toEqual(['streams_per_ip']);
  });
});

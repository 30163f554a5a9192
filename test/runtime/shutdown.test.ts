import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { fallbackAnswer } from '../../src/modules/replies/answers.js';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { startOpenAiServer, type OpenAiTestServer } from '../helpers/openai-server.js';
import { cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';
import { parseEvents } from './support.js';

const SHUTDOWN_TIMEOUT_MS = 3000;
const STREAMS = 28;
const JSON_REQUESTS = 2;
const API_MESSAGES = 3;
const REPLY_CONCURRENCY = 2;

/** What one visitor's streaming request gave: its events, and whether the stream ended cleanly. */
interface StreamResult {
  status: number;
  events: Array<{ event: string; data: unknown }>;
  cleanEnd: boolean;
  error?: string;
}

async function readStream(response: Response): Promise<StreamResult> {
  let text = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
    return { status: response.status, events: parseEvents(text), cleanEnd: true };
  } catch (error) {
    return { status: response.status, events: parseEvents(text), cleanEnd: false, error: String(error) };
  }
}

/** Waits until `check` holds, for at most `timeoutMs`; tells whether it came to hold. */
async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

// Point 12 of issue 29: SIGTERM while a provider never answers. Every visitor in flight gets the fallback
// answer (streamed, stored) and a clean end of stream, and the process exits 0 before SHUTDOWN_TIMEOUT_MS.
describe('SIGTERM with a provider that never answers', () => {
  const env: Record<string, string> = freshDatabaseEnv();
  let provider: OpenAiTestServer | undefined;
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await provider?.close();
    await dropDatabase(env);
  });

  it('answers every reply in flight with the fallback, ends the streams cleanly and exits 0 in time', { timeout: 120_000 }, async () => {
    provider = await startOpenAiServer({ kind: 'hang' });
    Object.assign(env, {
      LLM_PROVIDER: 'openai',
      OPENAI_BASE_URL: provider.baseUrl,
      OPENAI_API_KEY: 'sk-test-shutdown',
      LLM_TIMEOUT_MS: '600000',
      LLM_MAX_RETRIES: '0',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      REPLY_CONCURRENCY: String(REPLY_CONCURRENCY),
      // The worker runs on its wake-ups (API messages) only: it never takes a widget request's own job first.
      REPLY_POLL_INTERVAL_MS: '60000',
      WIDGET_RATE_PER_IP_PER_MINUTE: '100000',
    });
    const { key } = await cliTenant(env);
    const live = await startServer(env);
    server = live;
    const api = async (method: string, path: string, body?: unknown) =>
      fetch(`${live.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const bot = (await (await api('POST', '/chatbots', { name: 'Slow model agent', instructions: 'Help visitors.' })).json()) as { id: string; lead_capture: unknown };
    expect((await api('PATCH', `/chatbots/${bot.id}`, { status: 'active' })).status).toBe(200);
    const startConversation = async () => {
      const response = await fetch(`${live.url}/widget/v1/chatbots/${bot.id}/conversations`, { method: 'POST' });
      expect(response.status).toBe(201);
      return (await response.json()) as { conversation_id: string; visitor_token: string };
    };
    const visitorMessage = (conversation: { conversation_id: string; visitor_token: string }, i: number, accept: string) =>
      fetch(`${live.url}/widget/v1/conversations/${conversation.conversation_id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${conversation.visitor_token}`, 'content-type': 'application/json', accept },
        body: JSON.stringify({ content: `Widget question ${i}` }),
      });

    // 28 visitors streaming, 2 waiting for JSON: each request answers inline and calls the (hanging) provider.
    const widgetConversations = await Promise.all(Array.from({ length: STREAMS + JSON_REQUESTS }, () => startConversation()));
    const streams = widgetConversations.slice(0, STREAMS).map(async (conversation, i) => readStream(await visitorMessage(conversation, i, 'text/event-stream')));
    const jsonReplies = widgetConversations.slice(STREAMS).map(async (conversation, i) => {
      try {
        const response = await visitorMessage(conversation, STREAMS + i, 'application/json');
        return { status: response.status, body: (await response.json()) as { reply: { role: string; content: string } | null } };
      } catch (error) {
        return { status: 0, body: { reply: null }, error: String(error) };
      }
    });
    const asked = (marker: string) => provider!.requests.filter((request) => JSON.stringify(request.body).includes(marker)).length;
    expect(await waitFor(() => asked('Widget question') === STREAMS + JSON_REQUESTS), 'every widget reply reaches the provider').toBe(true);

    // 3 relayed visitor messages through the API: background worker jobs, REPLY_CONCURRENCY = 2 at a time.
    const apiConversations = await Promise.all(Array.from({ length: API_MESSAGES }, () => startConversation()));
    for (const [i, conversation] of apiConversations.entries()) {
      expect((await api('POST', `/conversations/${conversation.conversation_id}/messages`, { content: `API question ${i}` })).status).toBe(201);
    }
    // The worker takes REPLY_CONCURRENCY of them (asserted after the shutdown), and a second later still no more.
    await waitFor(() => asked('API question') >= REPLY_CONCURRENCY, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const workerCalls = asked('API question');

    const signalledAt = Date.now();
    live.child.kill('SIGTERM');
    const code = await live.exited;
    const elapsedMs = Date.now() - signalledAt;
    expect(code, live.output()).toBe(0);
    // Exit 0 means the server's own SHUTDOWN_TIMEOUT_MS timer did not fire; the bound only adds a margin for a busy machine.
    expect(elapsedMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 5000);
    expect(live.output()).not.toContain('shutdown timed out');

    const fallback = fallbackAnswer({ lead_capture: JSON.stringify(bot.lead_capture) });
    for (const result of await Promise.all(streams)) {
      expect(result.status).toBe(200);
      expect(result.cleanEnd, result.error).toBe(true);
      expect(result.events[0]!.event).toBe('message');
      const last = result.events.at(-1)!;
      expect(last.event).toBe('reply');
      expect(last.data).toMatchObject({ role: 'assistant', content: fallback });
      const streamed = result.events.filter((event) => event.event === 'delta').map((event) => (event.data as { text: string }).text).join('');
      expect(streamed).toBe(fallback);
    }
    for (const reply of await Promise.all(jsonReplies)) {
      expect(reply.status, 'error' in reply ? reply.error : undefined).toBe(201);
      expect(reply.body.reply).toMatchObject({ role: 'assistant', content: fallback });
    }

    expect(workerCalls).toBe(REPLY_CONCURRENCY);

    // Stored: each widget conversation holds the question and the fallback; the two API jobs in flight too.
    // The third API job never started: it stays pending and is answered by the next process.
    const handle = openDatabase(loadConfig(env).database);
    const { db } = handle;
    try {
      for (const conversation of [...widgetConversations, ...apiConversations]) {
        const rows = await db.selectFrom('messages').select(['role', 'content']).where('conversation_id', '=', conversation.conversation_id).orderBy('created_at').orderBy('id').execute();
        const jobs = await db.selectFrom('reply_jobs').select(['state', 'reply_message_id']).where('conversation_id', '=', conversation.conversation_id).execute();
        expect(jobs).toHaveLength(1);
        if (jobs[0]!.state === 'pending') {
          expect(rows.map((row) => row.role)).toEqual(['user']);
          continue;
        }
        expect(jobs[0]!.state).toBe('done');
        expect(rows).toEqual([
          { role: 'user', content: expect.stringMatching(/question/) },
          { role: 'assistant', content: fallback },
        ]);
      }
      const states = await db.selectFrom('reply_jobs').select('state').execute();
      expect(states.filter((job) => job.state === 'done')).toHaveLength(STREAMS + JSON_REQUESTS + REPLY_CONCURRENCY);
      expect(states.filter((job) => job.state === 'pending')).toHaveLength(API_MESSAGES - REPLY_CONCURRENCY);
    } finally {
      await handle.close();
    }
  });
});

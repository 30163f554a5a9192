import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';
import { openSse } from '../helpers/sse.js';

// Two server processes on one PostgreSQL schema: an event committed on instance A reaches a stream held on
// instance B (LISTEN/NOTIFY), and B's stream resumed on A misses nothing. PostgreSQL + Redis tier only.

describe('live events across instances', () => {
  let env: Record<string, string>;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL');
    env = freshDatabaseEnv();
    await cli(env, 'migrate');
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await dropDatabase(env);
  });

  it('an operator reply sent through A reaches the visitor\'s stream on B, and a resume on A misses nothing', { timeout: 60_000 }, async () => {
    const { key } = await cliTenant(env);
    const api = (server: ServerProcess, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const bot = (await (await api(a, 'POST', '/api/v1/chatbots', { name: 'Shared agent', instructions: 'Help.' })).json()) as { id: string };
    expect((await api(a, 'PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).status).toBe(200);
    const started = (await (await fetch(`${b.url}/widget/v1/chatbots/${bot.id}/conversations`, { method: 'POST' })).json()) as { conversation_id: string; visitor_token: string };
    const path = `/widget/v1/conversations/${started.conversation_id}/events`;
    const auth = { authorization: `Bearer ${started.visitor_token}` };

    const onB = await openSse(`${b.url}${path}`, auth);
    await onB.waitFor((event) => event.event === 'ready');
    expect((await api(a, 'POST', `/api/v1/conversations/${started.conversation_id}/messages`, { role: 'operator', content: 'Sent through A' })).status).toBe(201);
    const seen = await onB.waitFor((event) => event.event === 'message' && (event.data as { content: string }).content === 'Sent through A');
    onB.close();

    expect((await api(b, 'POST', `/api/v1/conversations/${started.conversation_id}/messages`, { role: 'operator', content: 'Sent through B while away' })).status).toBe(201);
    const onA = await openSse(`${a.url}${path}`, { ...auth, 'last-event-id': seen.id! });
    const ready = await onA.waitFor((event) => event.event === 'ready');
    const missed = onA.events.slice(0, onA.events.indexOf(ready)).filter((event) => event.event === 'message');
    expect(missed.map((event) => (event.data as { content: string }).content)).toEqual(['Sent through B while away']);
    onA.close();
  });
});

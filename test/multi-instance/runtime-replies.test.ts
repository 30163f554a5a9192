import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';

// Two server processes on one PostgreSQL schema: their reply workers compete for the same jobs (lease +
// SKIP LOCKED), and each visitor message is still answered exactly once. PostgreSQL + Redis tier only.

describe('two instances answer each visitor message once', () => {
  let env: Record<string, string>;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL');
    env = freshDatabaseEnv();
    await cli(env, 'migrate');
    // Answers take a moment, so both workers see jobs in flight; leases are short and renewed.
    const runtime = { REPLY_DELAY_MS: '200', REPLY_LEASE_MS: '1500', REPLY_POLL_INTERVAL_MS: '50', WIDGET_RATE_PER_IP_PER_MINUTE: '100000' };
    [a, b] = await Promise.all([startServer({ ...env, ...runtime }), startServer({ ...env, ...runtime })]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await dropDatabase(env);
  });

  it('API and widget messages spread over both instances get exactly one answer each', { timeout: 120_000 }, async () => {
    const { key } = await cliTenant(env);
    const api = (server: ServerProcess, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const bot = (await (await api(a, 'POST', '/api/v1/chatbots', { name: 'Shared agent', instructions: 'Help.' })).json()) as { id: string };
    expect((await api(b, 'PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).status).toBe(200);

    const conversations = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const server = i % 2 ? a : b;
        const started = (await (await fetch(`${server.url}/widget/v1/chatbots/${bot.id}/conversations`, { method: 'POST' })).json()) as { conversation_id: string; visitor_token: string };
        return { ...started, server, other: i % 2 ? b : a, viaWidget: i % 3 === 0 };
      }),
    );
    const sends = conversations.map(async (c) => {
      if (c.viaWidget) {
        const response = await fetch(`${c.server.url}/widget/v1/conversations/${c.conversation_id}/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${c.visitor_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content: 'widget hello' }),
        });
        expect(response.status).toBe(201);
      } else {
        expect((await api(c.server, 'POST', `/api/v1/conversations/${c.conversation_id}/messages`, { content: 'api hello' })).status).toBe(201);
      }
    });
    await Promise.all(sends);

    const rolesOf = async (server: ServerProcess, id: string) =>
      ((await (await api(server, 'GET', `/api/v1/conversations/${id}/messages`)).json()) as { data: { role: string }[] }).data.map((m) => m.role);
    for (const c of conversations) {
      const deadline = Date.now() + 60_000;
      while (!(await rolesOf(c.other, c.conversation_id)).includes('assistant')) {
        if (Date.now() > deadline) throw new Error(`no answer for ${c.conversation_id}:\n${a.output()}\n${b.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // Let both workers run several more cycles: nothing is answered twice.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const c of conversations) expect(await rolesOf(c.server, c.conversation_id)).toEqual(['user', 'assistant']);
  });
});

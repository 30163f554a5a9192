import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';

type Message = { id: string; role: string; content: string };

/**
 * A reply owed when the server dies is still given, once: the visitor message and its reply job commit
 * together; the dead runner's lease lapses and the restarted server answers.
 */
describe('crash: kill -9 between accepting a visitor message and answering it', () => {
  const env: Record<string, string> = { ...freshDatabaseEnv(), REPLY_LEASE_MS: '1500', REPLY_POLL_INTERVAL_MS: '100' };
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await dropDatabase(env);
  });

  it('answers exactly once after a restart (API message and streaming widget message)', { timeout: 120_000 }, async () => {
    const { key } = await cliTenant(env);
    const api = (server: ServerProcess, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });

    // The first server's engine cannot answer before it is killed.
    const first = await startServer({ ...env, REPLY_DELAY_MS: '600000' });
    servers.push(first);
    const bot = (await (await api(first, 'POST', '/api/v1/chatbots', { name: 'Crash agent', instructions: 'Help.' })).json()) as { id: string };
    expect((await api(first, 'PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).status).toBe(200);
    const start = async () => (await (await fetch(`${first.url}/widget/v1/chatbots/${bot.id}/conversations`, { method: 'POST' })).json()) as { conversation_id: string; visitor_token: string };
    const viaApi = await start();
    const viaWidget = await start();

    const sent = await api(first, 'POST', `/api/v1/conversations/${viaApi.conversation_id}/messages`, { content: 'Are you open on Sunday?' });
    expect(sent.status).toBe(201);
    // A streaming widget request: the stored message arrives, the answer is still being produced.
    const stream = await fetch(`${first.url}/widget/v1/conversations/${viaWidget.conversation_id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viaWidget.visitor_token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ content: 'Hello from the widget' }),
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const firstChunk = new TextDecoder().decode((await reader.read()).value);
    expect(firstChunk).toMatch(/^event: message\n/);

    for (const id of [viaApi.conversation_id, viaWidget.conversation_id]) {
      const messages = ((await (await api(first, 'GET', `/api/v1/conversations/${id}/messages`)).json()) as { data: Message[] }).data;
      expect(messages.map((m) => m.role)).toEqual(['user']);
    }
    process.kill(first.child.pid!, 'SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await reader.read().catch(() => undefined);

    const second = await startServer(env, { port: first.port });
    servers.push(second);
    const rolesOf = async (id: string) => ((await (await api(second, 'GET', `/api/v1/conversations/${id}/messages`)).json()) as { data: Message[] }).data.map((m) => m.role);
    for (const id of [viaApi.conversation_id, viaWidget.conversation_id]) {
      const deadline = Date.now() + 60_000;
      while (!(await rolesOf(id)).includes('assistant')) {
        if (Date.now() > deadline) throw new Error(`no answer after restart:\n${second.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // Several more worker cycles: still exactly one answer each.
    for (let round = 0; round < 10; round++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await rolesOf(viaApi.conversation_id)).toEqual(['user', 'assistant']);
      expect(await rolesOf(viaWidget.conversation_id)).toEqual(['user', 'assistant']);
    }
    const conversation = (await (await api(second, 'GET', `/api/v1/conversations/${viaApi.conversation_id}`)).json()) as { message_count: number };
    expect(conversation.message_count).toBe(2);
  });
});

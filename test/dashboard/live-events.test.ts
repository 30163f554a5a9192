import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { openSse } from '../helpers/sse.js';
import { startConversation } from '../runtime/support.js';

// The dashboard's live stream (issue 32): GET /app/api/events follows the signed-in user's workspace.
describe('dashboard event stream', () => {
  let t: TestApp;
  let owner: DashboardUser;
  let other: DashboardUser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUp(t.app, { workspaceName: 'Live inbox' });
    other = await signUp(t.app, { workspaceName: 'Elsewhere' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    // fetch may leave a spare keep-alive connection that never carried a request; the server would wait for it.
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const publishedAgent = async (user: DashboardUser, name: string) => {
    const bot = (await user.request('POST', '/app/api/chatbots', { name, instructions: 'Help.' })).json() as { id: string };
    expect((await user.request('PATCH', `/app/api/chatbots/${bot.id}`, { status: 'active' })).statusCode).toBe(200);
    return bot;
  };

  it('shows a new conversation and its first message as they happen, and nothing of another workspace', async () => {
    const bot = await publishedAgent(owner, 'Front desk');
    const elsewhere = await publishedAgent(other, 'Not mine');
    const stream = await openSse(`${base}/app/api/events`, { cookie: owner.cookie });
    expect(stream.status).toBe(200);
    await stream.waitFor((event) => event.event === 'ready');

    await startConversation(t.app, elsewhere.id);
    const started = await startConversation(t.app, bot.id);
    const created = await stream.waitFor((event) => event.event === 'conversation.created');
    expect(created.data).toMatchObject({ type: 'conversation.created', data: { id: started.conversation_id, chatbot_id: bot.id } });
    expect(stream.events.filter((event) => event.event === 'conversation.created')).toHaveLength(1);
    stream.close();
    await stream.ended;
  });

  it('needs a session', async () => {
    const response = await fetch(`${base}/app/api/events`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(401);
    await response.body?.cancel();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';

const SITE = 'https://www.bakery.example';

// GET /app/api/home: each step of the checklist is false on a new workspace and turns true after the real
// action (an agent, a synced source, publishing, a visitor in the widget, an API key), and the last 7 days
// count what happened. Members do not see the API key step.
describe('dashboard home', () => {
  let t: TestApp;
  let owner: DashboardUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUp(t.app, { workspaceName: 'Home' });
  });
  afterAll(async () => t?.close());

  async function home(user: DashboardUser = owner) {
    const response = await user.request('GET', '/app/api/home');
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  it('starts with every step open and an empty week', async () => {
    expect(await home()).toEqual({
      object: 'home',
      agent: null,
      steps: { agent_created: false, source_synced: false, agent_published: false, website_traffic: false, api_key: false },
      last_7_days: { from: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), conversations: 0, messages: 0, leads: 0, answer_rate: null },
    });
    const today = new Date().toISOString().slice(0, 10);
    const from = (await home()).last_7_days.from;
    expect((Date.parse(today) - Date.parse(from)) / 86_400_000).toBe(6);
  });

  it('ticks each step after the real action', async () => {
    const created = await owner.request('POST', '/app/api/chatbots', { name: 'Bakery helper', instructions: 'Answer about bread.' });
    expect(created.statusCode, created.body).toBe(201);
    const bot = created.json();
    let state = await home();
    expect(state.agent).toEqual({ id: bot.id, name: 'Bakery helper', status: 'draft' });
    expect(state.steps).toEqual({ agent_created: true, source_synced: false, agent_published: false, website_traffic: false, api_key: false });

    const source = await owner.request('POST', `/app/api/chatbots/${bot.id}/sources`, { type: 'text', title: 'Hours', content: 'We bake from 6am to 2pm, Tuesday to Sunday.' });
    expect(source.statusCode, source.body).toBe(201);
    expect((await home()).steps).toMatchObject({ source_synced: true, agent_published: false });

    const published = await owner.request('PATCH', `/app/api/chatbots/${bot.id}`, { status: 'active', allowed_origins: [SITE] });
    expect(published.statusCode, published.body).toBe(200);
    expect((await home()).steps).toMatchObject({ agent_published: true, website_traffic: false });

    // Chats on the service's own hosted page (/chat/{id}: its own origin) or with no Origin are no website.
    const hosted = (headers: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: `/widget/v1/chatbots/${bot.id}/conversations`, headers: { 'content-type': 'application/json', ...headers }, payload: '{}' });
    expect((await hosted({ host: 'chat.example.net', origin: 'https://chat.example.net' })).statusCode).toBe(201);
    expect((await hosted({})).statusCode).toBe(201);
    expect((await home()).steps).toMatchObject({ website_traffic: false });

    // A visitor on the website opens the widget: the runtime starts a conversation (channel widget).
    const started = await t.app.inject({
      method: 'POST',
      url: `/widget/v1/chatbots/${bot.id}/conversations`,
      headers: { origin: SITE, 'content-type': 'application/json' },
      payload: JSON.stringify({ visitor: { name: 'Ada' } }),
    });
    expect(started.statusCode, started.body).toBe(201);
    // The conversation says which website it started on; the hosted page's and the Origin-less ones say none.
    const listed = await owner.request('GET', `/app/api/conversations?chatbot_id=${bot.id}`);
    expect(listed.json().data.map((c: { origin: string | null }) => c.origin)).toEqual([SITE, null, null]);
    state = await home();
    expect(state.steps).toMatchObject({ website_traffic: true, api_key: false });
    expect(state.last_7_days).toMatchObject({ conversations: 3 });

    const lead = await owner.request('POST', '/app/api/leads', { name: 'Ada', email: 'ada@example.com' });
    expect(lead.statusCode, lead.body).toBe(201);
    expect((await home()).last_7_days).toMatchObject({ conversations: 3, leads: 1 });

    const key = await owner.request('POST', '/app/api/api-keys', { name: 'shop', scopes: ['leads:read'] });
    expect(key.statusCode, key.body).toBe(201);
    expect((await home()).steps).toEqual({ agent_created: true, source_synced: true, agent_published: true, website_traffic: true, api_key: true });

    // A revoked key no longer counts.
    expect((await owner.request('POST', `/app/api/api-keys/${key.json().id}/revoke`)).statusCode).toBe(200);
    expect((await home()).steps.api_key).toBe(false);
  });

  it('leaves the API key step out for a member, and reads only its own workspace', async () => {
    const invitation = await owner.request('POST', '/app/api/invitations', { role: 'member' });
    expect(invitation.statusCode, invitation.body).toBe(201);
    const member = await signUp(t.app, { invitationToken: invitation.json().token });
    const state = await home(member);
    expect(state.steps).toMatchObject({ agent_created: true, api_key: null });

    const stranger = await signUp(t.app, { workspaceName: 'Elsewhere' });
    expect((await home(stranger)).steps).toEqual({ agent_created: false, source_synced: false, agent_published: false, website_traffic: false, api_key: false });
    expect((await home(stranger)).last_7_days).toMatchObject({ conversations: 0, leads: 0 });
  });

  it('needs a session', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/app/api/home' });
    expect(response.statusCode).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';

// The dashboard's resource endpoints reuse the /api/v1 services: agents and the live preview through the
// chat runtime, conversations (operator reply, hand back, close), leads (search, CSV), the audit log.
describe('dashboard resources', () => {
  let t: TestApp;
  let owner: DashboardUser;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUp(t.app, { workspaceName: 'Resources' });
  });
  afterAll(async () => t?.close());

  it('previews a draft agent through the runtime in a dashboard conversation, audited as the user', async () => {
    const bot = (await owner.request('POST', '/app/api/chatbots', { name: 'Draft bot', knowledge: [{ title: 'Hours', content: 'We are open 9 to 5 on weekdays.' }] })).json();
    expect(bot.status).toBe('draft');
    const started = await owner.request('POST', `/app/api/chatbots/${bot.id}/preview`);
    expect(started.statusCode, started.body).toBe(201);
    const conversationId = started.json().conversation.id;
    expect(started.json().conversation.channel).toBe('dashboard');
    const sent = await owner.request('POST', `/app/api/chatbots/${bot.id}/preview/${conversationId}/messages`, { content: 'When are you open?' });
    expect(sent.statusCode, sent.body).toBe(201);
    const { message, reply } = sent.json();
    expect(message).toMatchObject({ role: 'user', content: 'When are you open?', author: { type: 'user' } });
    expect(reply).toMatchObject({ role: 'assistant', conversation_id: conversationId });
    expect(reply.content.length).toBeGreaterThan(0);
    const transcript = (await owner.request('GET', `/app/api/conversations/${conversationId}/messages`)).json().data;
    expect(transcript.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    const events = await t.app.services.audit.list(owner.workspaceId);
    expect(events.find((e) => e.action === 'conversation.created')?.actor).toMatchObject({ type: 'user', name: owner.email });
    // Another agent's id with this conversation is a 404.
    const other = (await owner.request('POST', '/app/api/chatbots', { name: 'Other' })).json();
    expectProblem(await owner.request('POST', `/app/api/chatbots/${other.id}/preview/${conversationId}/messages`, { content: 'x' }), 404, 'not_found');
  });

  it('an operator reply silences the agent until handed back; close refuses new messages', async () => {
    const bot = (await owner.request('POST', '/app/api/chatbots', { name: 'Ops bot', instructions: 'Help.' })).json();
    const conversationId = (await owner.request('POST', `/app/api/chatbots/${bot.id}/preview`)).json().conversation.id;
    const operator = await owner.request('POST', `/app/api/conversations/${conversationId}/messages`, { content: 'A human here.' });
    expect(operator.statusCode, operator.body).toBe(201);
    expect(operator.json()).toMatchObject({ role: 'operator', author: { type: 'user' } });
    expect((await owner.request('GET', `/app/api/conversations/${conversationId}`)).json().mode).toBe('human');
    const silent = (await owner.request('POST', `/app/api/chatbots/${bot.id}/preview/${conversationId}/messages`, { content: 'Hello?' })).json();
    expect(silent.reply).toBeNull();
    expect((await owner.request('POST', `/app/api/conversations/${conversationId}/hand-back`)).json().mode).toBe('agent');
    expect((await owner.request('POST', `/app/api/conversations/${conversationId}/close`)).json().status).toBe('closed');
    expectProblem(await owner.request('POST', `/app/api/conversations/${conversationId}/messages`, { content: 'late' }), 409, 'conversation_closed');
    const listed = (await owner.request('GET', `/app/api/conversations?chatbot_id=${bot.id}&status=closed`)).json().data;
    expect(listed.map((c: { id: string }) => c.id)).toEqual([conversationId]);
    const actions = (await t.app.services.audit.list(owner.workspaceId)).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['conversation.handed_back', 'conversation.closed']));
  });

  it('leads: create with source dashboard, search, edit status, export CSV with formulas neutralised', async () => {
    const created = await owner.request('POST', '/app/api/leads', { name: '=HYPERLINK("x")', email: 'grace@example.com', company: 'Navy' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().source).toBe('dashboard');
    await owner.request('POST', '/app/api/leads', { name: 'Alan', email: 'alan@example.com', company: 'Bletchley' });
    const found = (await owner.request('GET', '/app/api/leads?search=NAV')).json().data;
    expect(found.map((l: { email: string }) => l.email)).toEqual(['grace@example.com']);
    expect((await owner.request('GET', '/app/api/leads?search=100%25')).json().data).toEqual([]);
    const edited = await owner.request('PATCH', `/app/api/leads/${created.json().id}`, { status: 'qualified' });
    expect(edited.json().status).toBe('qualified');
    const csv = await owner.request('GET', '/app/api/leads/export?status=qualified');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,name,email,phone,company,status/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`"'=HYPERLINK(""x"")",grace@example.com`);
  });

  it('audit log: filters by actor and action, exports CSV and JSON Lines, verifies the chain', async () => {
    const byAction = (await owner.request('GET', '/app/api/audit?action=lead.created')).json();
    expect(byAction.data.length).toBeGreaterThanOrEqual(2);
    expect(byAction.data.every((e: { action: string; actor: { name: string } }) => e.action === 'lead.created' && e.actor.name === owner.email)).toBe(true);
    expect((await owner.request('GET', '/app/api/audit?actor=nobody@example.com')).json().data).toEqual([]);
    const paged = (await owner.request('GET', '/app/api/audit?limit=2')).json();
    expect(paged.data).toHaveLength(2);
    const older = (await owner.request('GET', `/app/api/audit?limit=2&before_seq=${paged.next_before_seq}`)).json();
    expect(older.data[0].seq).toBeLessThan(paged.data[1].seq);
    const jsonl = await owner.request('GET', '/app/api/audit/export?format=jsonl');
    const events = jsonl.body.trim().split('\n').map((line) => JSON.parse(line));
    expect(events[0]).toMatchObject({ seq: 1, action: 'workspace.created' });
    const csv = await owner.request('GET', '/app/api/audit/export?format=csv');
    expect(csv.body.trim().split('\r\n')).toHaveLength(events.length + 1);
    expect((await owner.request('GET', '/app/api/audit/verify')).json()).toMatchObject({ ok: true, events: events.length });
  });

  it('serves the single-page app on dashboard routes without swallowing the API, widget or docs', async () => {
    for (const url of ['/', '/signin', '/agents/bot_x', '/settings/developers']) {
      const page = await t.app.inject({ method: 'GET', url });
      expect(page.statusCode, url).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
    }
    expectProblem(await t.app.inject({ method: 'GET', url: '/api/v1/nope' }), 404, 'not_found');
    expectProblem(await t.app.inject({ method: 'GET', url: '/app/api/nope' }), 404, 'not_found');
    expectProblem(await t.app.inject({ method: 'GET', url: '/assets/missing.js' }), 404, 'not_found');
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).headers['content-type']).toMatch(/^text\/html/);
  });
});

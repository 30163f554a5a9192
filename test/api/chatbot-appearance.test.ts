import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem, must } from './support.js';

// Issue 33 §3: the widget's look per agent (`appearance`), stored on the agent, merged by PATCH, checked in words,
// audited and carried by the chatbot.updated event; the widget reads it from GET /widget/v1/chatbots/{id}.

const DEFAULTS = { color: '#2f5bd3', position: 'right', launcher: { label: null, icon: 'chat' }, avatar_url: null, title: null };
type Appearance = typeof DEFAULTS | Record<string, unknown>;
type Bot = { id: string; name: string; appearance: Appearance };

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
});
afterAll(() => t.close());

const patch = (id: string, body: unknown) => tenant.request('PATCH', `/api/v1/chatbots/${id}`, body);

describe('appearance on the agent', () => {
  it('defaults for a new agent, and presents the defaults for a row stored before the column existed ({})', async () => {
    const bot = (await makeChatbot(tenant)) as Bot;
    expect(bot.appearance).toEqual(DEFAULTS);
    await t.app.database.db.updateTable('chatbots').set({ appearance: '{}' }).where('id', '=', bot.id).execute();
    expect((await must<Bot>(tenant.request('GET', `/api/v1/chatbots/${bot.id}`), 200)).appearance).toEqual(DEFAULTS);
  });

  it('is set on create (partial: the rest defaults) and read back', async () => {
    const bot = (await makeChatbot(tenant, { appearance: { color: '#0B8043', position: 'left', launcher: { label: 'Ask us' } } })) as Bot;
    const expected = { ...DEFAULTS, color: '#0b8043', position: 'left', launcher: { label: 'Ask us', icon: 'chat' } };
    expect(bot.appearance).toEqual(expected);
    expect((await must<Bot>(tenant.request('GET', `/api/v1/chatbots/${bot.id}`), 200)).appearance).toEqual(expected);
  });

  it('PATCH merges a partial appearance (launcher too), null clears, and the change is audited and in chatbot.updated', async () => {
    const bot = (await makeChatbot(tenant, { appearance: { color: '#111111', title: 'Help desk', launcher: { label: 'Chat', icon: 'question' } } })) as Bot;
    const patched = await must<Bot>(patch(bot.id, { appearance: { avatar_url: 'https://cdn.example.com/a.png', launcher: { icon: 'sparkle' } } }), 200);
    expect(patched.appearance).toEqual({
      color: '#111111',
      position: 'right',
      launcher: { label: 'Chat', icon: 'sparkle' },
      avatar_url: 'https://cdn.example.com/a.png',
      title: 'Help desk',
    });
    const cleared = await must<Bot>(patch(bot.id, { appearance: { title: null, launcher: { label: '  ' } } }), 200);
    expect(cleared.appearance).toMatchObject({ title: null, launcher: { label: null, icon: 'sparkle' }, avatar_url: 'https://cdn.example.com/a.png' });

    const audits = await t.app.database.db
      .selectFrom('audit_events')
      .select(['changes', 'seq'])
      .where('workspace_id', '=', tenant.workspaceId)
      .where('target_id', '=', bot.id)
      .where('action', '=', 'chatbot.updated')
      .orderBy('seq')
      .execute();
    expect(audits).toHaveLength(2);
    expect(JSON.parse(audits[0]!.changes).appearance).toMatchObject({
      before: { avatar_url: null, launcher: { icon: 'question' } },
      after: { avatar_url: 'https://cdn.example.com/a.png', launcher: { icon: 'sparkle' } },
    });
    const events = await must<{ data: Array<{ type: string; data: Bot }> }>(tenant.request('GET', '/api/v1/events?limit=100'), 200);
    const mine = events.data.filter((event) => event.type === 'chatbot.updated' && event.data.id === bot.id);
    expect(mine.at(-1)!.data.appearance).toEqual(cleared.appearance);
  });

  it('a PATCH that sets the look it already has changes nothing (no new version, no audit)', async () => {
    const bot = (await makeChatbot(tenant)) as Bot & { updated_at: string };
    await t.app.database.db.updateTable('chatbots').set({ appearance: '{}' }).where('id', '=', bot.id).execute();
    const same = await must<Bot & { updated_at: string }>(patch(bot.id, { appearance: { color: '#2F5BD3', position: 'right' } }), 200);
    expect(same.updated_at).toBe(bot.updated_at);
    const audits = await t.app.database.db.selectFrom('audit_events').select('id').where('target_id', '=', bot.id).where('action', '=', 'chatbot.updated').execute();
    expect(audits).toEqual([]);
  });

  it('refuses a wrong colour, a non-https avatar, bad enums, too-long text and unknown members with 400 in words', async () => {
    const bot = (await makeChatbot(tenant)) as Bot;
    const colour = expectProblem(await patch(bot.id, { appearance: { color: 'blue' } }), 400, 'validation_failed');
    expect(colour.detail).toContain('color must be a hex colour like #1a73e8');
    expect(colour.errors).toEqual([{ pointer: '/appearance/color', message: expect.stringContaining('must be a hex colour like #1a73e8: got "blue"') }]);
    expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'A', appearance: { color: '#12345' } }), 400, 'validation_failed');
    for (const url of ['http://cdn.example.com/a.png', 'javascript:alert(1)', 'not a url', 'data:image/png;base64,AAAA']) {
      const avatar = expectProblem(await patch(bot.id, { appearance: { avatar_url: url } }), 400, 'validation_failed');
      expect(avatar.errors).toEqual([{ pointer: '/appearance/avatar_url', message: expect.stringContaining('must be an https URL') }]);
    }
    expectProblem(await patch(bot.id, { appearance: { avatar_url: `https://cdn.example.com/${'a'.repeat(2048)}` } }), 400, 'validation_failed');
    expectProblem(await patch(bot.id, { appearance: { position: 'top' } }), 400, 'validation_failed');
    expectProblem(await patch(bot.id, { appearance: { launcher: { icon: 'rocket' } } }), 400, 'validation_failed');
    expectProblem(await patch(bot.id, { appearance: { launcher: { label: 'x'.repeat(41) } } }), 400, 'validation_failed');
    expectProblem(await patch(bot.id, { appearance: { title: 'x'.repeat(61) } }), 400, 'validation_failed');
    expectProblem(await patch(bot.id, { appearance: { font: 'Comic Sans' } }), 400, 'validation_failed');
    expect((await must<Bot>(tenant.request('GET', `/api/v1/chatbots/${bot.id}`), 200)).appearance).toEqual(DEFAULTS);
  });

  it('the widget config route presents the look with the agent\'s first words, fresh at every read', async () => {
    const bot = (await makeChatbot(tenant, { welcome_message: 'Hello!', suggested_questions: ['Hours?'], language: 'fr' })) as Bot;
    const before = await t.app.inject({ method: 'GET', url: `/widget/v1/chatbots/${bot.id}` });
    expect(before.statusCode).toBe(200);
    expect(before.headers['cache-control']).toBe('no-cache');
    expect(before.json()).toEqual({ id: bot.id, name: bot.name, title: bot.name, welcome_message: 'Hello!', suggested_questions: ['Hours?'], language: 'fr', translations: {}, appearance: DEFAULTS });
    await must(patch(bot.id, { appearance: { color: '#ffcc00', title: 'Support' } }), 200);
    const after = (await t.app.inject({ method: 'GET', url: `/widget/v1/chatbots/${bot.id}` })).json();
    expect(after).toMatchObject({ title: 'Support', appearance: { color: '#ffcc00', title: 'Support' } });
    expectProblem(await t.app.inject({ method: 'GET', url: '/widget/v1/chatbots/bot_nope' }), 404, 'not_found');
  });

  it('the hosted chat page names the title and colour and lets the avatar\'s origin through its CSP', async () => {
    const bot = (await makeChatbot(tenant, { appearance: { color: '#aa3300', title: 'Ask Ada', avatar_url: 'https://img.example.org/ada.png' } })) as Bot;
    await must(patch(bot.id, { status: 'active', instructions: 'Help.' }), 200);
    const page = await t.app.inject({ method: 'GET', url: `/chat/${bot.id}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>Chat with Ask Ada</title>');
    expect(page.body).toContain('<meta name="theme-color" content="#aa3300">');
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data: https://img.example.org;");
  });
});

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { FastifyInstance } from 'fastify';
import { testConfig } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { dropDatabase } from '../helpers/database.js';
import { uniqueEmail } from '../helpers/dashboard.js';
import { freePort } from '../helpers/processes.js';

const hasChromium = chromiumAvailable();

// The dashboard in a real browser against the real server (in process, on a free port): the first-run path
// from sign-up to a published agent, a preview chat and an API key that works, then revocation and the
// audit log; roles, workspace isolation and CSRF.
describe.skipIf(!hasChromium)('dashboard in the browser', () => {
  let app: FastifyInstance;
  let databaseEnv: Record<string, string>;
  let base: string;
  let browser: Browser;
  const owner = { email: uniqueEmail('owner'), password: 'a long enough password' };
  let agentId = '';

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `dashboard-${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = testConfig({ publicUrl: base, signInLimit: { perIpAndEmail: 1000, perIp: 100_000 } });
    databaseEnv = config.databaseEnv;
    app = await buildApp(config);
    await app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    if (databaseEnv) await dropDatabase(databaseEnv);
  });

  it('sign up → agent → publish → preview chat → API key with two scopes → revoke → audit log', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await shot(page, '01-sign-in');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email', { exact: true }).fill(owner.email);
    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    await page.getByLabel('Workspace name').fill('Acme Bakery');
    await shot(page, '02-sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Welcome to Acme Bakery' }).waitFor();
    await shot(page, '03-home-new-user');

    // Home guides to the first agent.
    await page.getByRole('link', { name: 'Create your first agent' }).click();
    await page.getByLabel('Agent name').fill('Bakery helper');
    await shot(page, '04-agents-new');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Bakery helper', level: 1 }).waitFor();
    agentId = page.url().split('/').pop()!;
    expect(agentId).toMatch(/^bot_/);
    await page.getByLabel('Instructions').fill('You help visitors of Acme Bakery. Be brief.');
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('button', { name: 'Add knowledge entry' }).click();
    await page.getByLabel('Title', { exact: true }).fill('Opening hours');
    await page.getByLabel('Content', { exact: true }).fill('The bakery is open from 7am to 6pm, Monday to Saturday.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();

    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();

    // The live preview is answered by the chat runtime.
    await page.getByRole('button', { name: 'Start preview chat' }).click();
    await page.getByLabel('Message', { exact: true }).fill('When are you open?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const transcript = page.getByRole('list', { name: 'Preview transcript' });
    await transcript.locator('li.msg.user').filter({ hasText: 'When are you open?' }).waitFor();
    await transcript.locator('li.msg.assistant:not(.typing)').nth(1).waitFor();
    await shot(page, '05-agent-editor-preview');
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Install' }).click();
    const snippet = await page.getByLabel('Embed snippet').textContent();
    expect(snippet).toBe(`<script src="${base}/widget.js" data-chatbot-id="${agentId}" async></script>`);

    // Settings → Developers: a key with two scopes; the secret is shown once.
    await page.getByRole('link', { name: 'Settings' }).click();
    await shot(page, '06-settings');
    await page.getByRole('link', { name: 'Developers' }).click();
    await expect(page.getByRole('link', { name: 'API reference' }).getAttribute('href')).resolves.toBe('/docs');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('CRM sync');
    await page.getByLabel('chatbots:read').check();
    await page.getByLabel('leads:read').check();
    await shot(page, '07-developers-create-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('api-key-secret').textContent())!.trim();
    expect(secret).toMatch(/^wsk_/);
    await shot(page, '08-developers-secret-shown');

    const call = (url: string) => fetch(`${base}${url}`, { headers: { authorization: `Bearer ${secret}` } });
    const agents = await call('/api/v1/chatbots');
    expect(agents.status).toBe(200);
    expect(((await agents.json()) as { data: { id: string }[] }).data.map((b) => b.id)).toEqual([agentId]);
    expect((await call('/api/v1/leads')).status).toBe(200);
    const forbidden = await call('/api/v1/analytics');
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ code: 'insufficient_scope', required_scope: 'analytics:read' });

    // The list shows the key (never the secret), and revocation takes effect on the next request.
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row').filter({ hasText: 'CRM sync' });
    await expect(row.textContent()).resolves.toContain('chatbots:read, leads:read');
    await expect(row.textContent()).resolves.toContain(owner.email);
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('button', { name: 'Revoke CRM sync' }).click();
    await shot(page, '09-developers-revoke-confirm');
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    await row.getByText('revoked').waitFor();
    await shot(page, '10-developers-revoked');
    const revoked = await call('/api/v1/chatbots');
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({ code: 'invalid_api_key' });

    // Settings → Audit log shows each of those writes with the user as actor.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByTestId('chain-status').filter({ hasText: 'Chain verified' }).waitFor();
    await shot(page, '11-audit-log');
    const rows = await page.locator('table.audit tbody tr').allTextContents();
    for (const action of ['workspace.created', 'chatbot.created', 'chatbot.updated', 'conversation.created', 'message.created', 'api_key.created', 'api_key.revoked']) {
      const matching = rows.filter((text) => text.includes(action));
      expect(matching.length, action).toBeGreaterThan(0);
      expect(matching.some((text) => text.includes(owner.email)), `${action} by ${owner.email}`).toBe(true);
    }
    // The publish is one of the chatbot.updated events, by the owner.
    expect(rows.some((text) => text.includes('chatbot.updated') && text.includes('status') && text.includes('active') && text.includes(owner.email))).toBe(true);

    // The remaining pages, for the screenshots and a sanity check that they render.
    for (const [name, link, heading] of [
      ['12-conversations', 'Conversations', 'Conversations'],
      ['13-leads', 'Leads', 'Leads'],
      ['14-analytics', 'Analytics', 'Analytics'],
      ['15-agents', 'Agents', 'Agents'],
    ] as const) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      await shot(page, name);
    }
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversations' }).click();
    await page.getByRole('link', { name: owner.email }).click();
    await page.getByRole('heading', { name: `Conversation with ${owner.email}` }).waitFor();
    await shot(page, '16-conversation-detail');
    await context.close();
  });

  it('a member cannot reach key management; a session of another workspace reads nothing of this one; CSRF is refused', { timeout: 90_000 }, async () => {
    // The owner invites a member.
    const ownerContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const ownerPage = await ownerContext.newPage();
    await ownerPage.goto(`${base}/signin`);
    await ownerPage.getByLabel('Email', { exact: true }).fill(owner.email);
    await ownerPage.getByLabel('Password', { exact: true }).fill(owner.password);
    await ownerPage.getByRole('button', { name: 'Sign in' }).click();
    await ownerPage.getByRole('link', { name: 'Settings' }).click();
    await ownerPage.getByRole('link', { name: 'Members' }).click();
    await ownerPage.getByRole('combobox', { name: /^Role/ }).first().selectOption('member');
    await ownerPage.getByRole('button', { name: 'Create invite link' }).click();
    const inviteUrl = (await ownerPage.getByTestId('invite-link').textContent())!.trim();
    await shot(ownerPage, '17-members-invite');

    // CSRF: a same-origin write without the token, and a write from another origin with the cookie, are refused.
    const noToken = await ownerPage.evaluate(async () => {
      const response = await fetch('/app/api/chatbots', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'No token' }) });
      return { status: response.status, body: await response.json() };
    });
    expect(noToken).toMatchObject({ status: 403, body: { code: 'csrf_failed' } });
    const evil = http.createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>evil</title><p>hello</p>');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const evilPort = (evil.address() as { port: number }).port;
    const evilPage = await ownerContext.newPage();
    await evilPage.goto(`http://127.0.0.1:${evilPort}/`);
    await evilPage.evaluate(async (target) => {
      await fetch(`${target}/app/api/chatbots`, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"name":"Forged"}' });
    }, base);
    evil.close();
    const names = (await app.database.db.selectFrom('chatbots').select('name').execute()).map((r) => r.name);
    expect(names).not.toContain('Forged');
    expect(names).not.toContain('No token');

    // The member signs up through the link and cannot reach key management.
    const memberContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const memberPage = await memberContext.newPage();
    await memberPage.goto(inviteUrl);
    await memberPage.getByRole('heading', { name: 'Join Acme Bakery' }).waitFor();
    await shot(memberPage, '18-invite-accept');
    await memberPage.getByLabel('Email', { exact: true }).fill(uniqueEmail('member'));
    await memberPage.getByLabel('Password', { exact: true }).fill('member password 1');
    await memberPage.getByRole('button', { name: 'Create account' }).click();
    await memberPage.getByRole('heading', { name: 'Welcome to Acme Bakery' }).waitFor();
    await memberPage.getByRole('link', { name: 'Settings' }).click();
    await memberPage.getByRole('link', { name: 'Developers' }).click();
    await memberPage.getByText('Only owners and admins of this workspace can manage this.').waitFor();
    expect(await memberPage.getByRole('button', { name: 'Create API key' }).count()).toBe(0);
    await shot(memberPage, '19-member-developers-refused');
    const memberKeys = await memberPage.evaluate(async () => (await fetch('/app/api/api-keys')).status);
    expect(memberKeys).toBe(403);

    // Another workspace's session cannot read this workspace's agent.
    const strangerContext = await browser.newContext();
    const strangerPage = await strangerContext.newPage();
    await strangerPage.goto(`${base}/signup`);
    await strangerPage.getByLabel('Email', { exact: true }).fill(uniqueEmail('stranger'));
    await strangerPage.getByLabel('Password', { exact: true }).fill('stranger password');
    await strangerPage.getByLabel('Workspace name').fill('Other shop');
    await strangerPage.getByRole('button', { name: 'Create account' }).click();
    await strangerPage.getByRole('heading', { name: 'Welcome to Other shop' }).waitFor();
    const crossRead = await strangerPage.evaluate(async (id) => {
      const one = await fetch(`/app/api/chatbots/${id}`);
      const list = await fetch('/app/api/chatbots');
      return { one: one.status, list: ((await list.json()) as { data: unknown[] }).data.length };
    }, agentId);
    expect(crossRead).toEqual({ one: 404, list: 0 });
    await strangerPage.goto(`${base}/agents/${agentId}`);
    await strangerPage.getByRole('alert').filter({ hasText: 'No AI Agent' }).waitFor();
    await shot(strangerPage, '20-other-workspace-404');
    await Promise.all([ownerContext.close(), memberContext.close(), strangerContext.close()]);
  });
});

import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { startOpenAiServer, type OpenAiTestServer } from '../helpers/openai-server.js';
import { makeActiveChatbot, startConversation, widget } from '../runtime/support.js';

// Issue 33, point 5 in Chromium: the instance owner opens Settings → Model provider, tests a connection
// (a wrong key first: the provider's 401 in words), saves an OpenAI-compatible provider (a local server
// speaking the real wire format), sees it answering now, and the next reply comes from it; another
// member sees which provider answers but cannot change it.

const KEY = 'sk-browser-7c2d9e4f1a6b3850';

describe.runIf(chromiumAvailable())('dashboard: model provider settings', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: DashboardUser;
  let member: DashboardUser;
  let server: OpenAiTestServer;

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `provider-${name}.png`), fullPage: true });
  }

  async function open(user: DashboardUser, width = 1280): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    context.setDefaultTimeout(15_000);
    await context.addCookies([{ name: 'sid', value: user.cookie.replace(/^sid=/, ''), url: base }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    return { context, page, problems };
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    server = await startOpenAiServer({ kind: 'answer', chunks: ['Answered by ', 'the saved provider.'] });
    t = await createTestApp({ secretKey: randomBytes(32) });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
    member = await signUp(t.app, { workspaceName: 'Second Shop' });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('the owner tests a connection (a wrong key, then the right one), saves, and sees the provider answering now', { timeout: 90_000 }, async () => {
    const { context, page, problems } = await open(owner);
    await page.goto(`${base}/settings`);
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Model provider' }).click();
    const active = page.getByTestId('active-provider-summary');
    await page.getByRole('heading', { name: 'Model provider' }).waitFor();
    await shot(page, '0-opened');
    await expect.poll(() => active.textContent()).toBe('Built-in');
    await page.getByText('The default: no provider has been chosen.').waitFor();
    await shot(page, '1-default');

    const form = page.getByRole('form', { name: 'Model provider settings' });
    await form.getByRole('combobox', { name: 'Provider' }).selectOption('openai');
    await form.getByLabel('Base URL').fill(server.baseUrl);
    await form.getByLabel('Default model').fill('gpt-test');

    // A wrong key: the provider's 401, in words, the key not in them.
    server.behave({ kind: 'status', status: 401, message: 'Incorrect API key provided: sk-wrong-000.' });
    await form.getByLabel('API key').fill('sk-wrong-000');
    await form.getByRole('button', { name: 'Test connection' }).click();
    const result = page.getByTestId('connection-result');
    await expect.poll(() => result.textContent()).toBe('Connection failed. The provider answered 401 Unauthorized: Incorrect API key provided: [redacted].');
    await shot(page, '2-test-failed');

    server.behave({ kind: 'answer', chunks: ['Answered by ', 'the saved provider.'] });
    await form.getByLabel('API key').fill(KEY);
    await form.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => result.textContent()).toBe('Connection OK. Connected to ' + server.baseUrl + ': the model gpt-test answered.');
    await shot(page, '3-test-ok');

    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved. Agents now answer with OpenAI-compatible · gpt-test.').waitFor();
    await expect.poll(() => active.textContent()).toBe(`OpenAI-compatible · gpt-test · ${server.baseUrl}`);
    await page.getByText(/^Chosen in Settings → Model provider/).waitFor();
    // The key is gone from the form and never comes back from the server: only its last four characters.
    expect(await form.getByLabel('API key').inputValue()).toBe('');
    expect(await form.getByLabel('API key').getAttribute('placeholder')).toBe(`Saved key ending in ${KEY.slice(-4)}; leave empty to keep it`);
    await page.reload();
    await expect.poll(() => active.textContent()).toBe(`OpenAI-compatible · gpt-test · ${server.baseUrl}`);
    expect(await page.content()).not.toContain(KEY);
    await shot(page, '4-saved');

    // The next reply comes from the saved provider: no restart.
    const tenant = await t.tenant();
    const bot = await makeActiveChatbot(tenant);
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
    const answered = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Are you open?' } });
    expect(answered.json().reply.content).toBe('Answered by the saved provider.');

    // At 375 px the page still fits.
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await shot(page, '5-phone');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an agent picks its model from the provider\'s list on its Behaviour tab, which says which provider answers', { timeout: 60_000 }, async () => {
    const listing = await startOpenAiServer({ kind: 'answer', chunks: ['From the listed model.'] }, { models: ['gpt-small', 'gpt-large'] });
    try {
      const saved = await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: listing.baseUrl, model: 'gpt-small', api_key: KEY });
      expect(saved.statusCode, saved.body).toBe(200);
      const created = await owner.request('POST', '/app/api/chatbots', { name: 'Model picker', instructions: 'Help.' });
      expect(created.statusCode, created.body).toBe(201);
      const bot = created.json() as { id: string };
      const { context, page, problems } = await open(owner);
      await page.goto(`${base}/agents/${bot.id}#behaviour`);
      await expect.poll(() => page.getByTestId('active-provider').textContent()).toBe('Answers with: OpenAI-compatible · gpt-small');
      const model = page.getByRole('combobox', { name: 'Model' });
      await expect.poll(() => model.locator('option').allTextContents()).toEqual(['Service default (gpt-small)', 'gpt-large', 'gpt-small']);
      await model.selectOption('gpt-large');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect((await owner.request('GET', `/app/api/chatbots/${bot.id}`)).json().model).toBe('gpt-large');
      await shot(page, '7-agent-model');
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: server.baseUrl, model: 'gpt-test' });
      await listing.close();
    }
  });

  it('another member sees which provider answers, and that only the instance owner can change it', { timeout: 60_000 }, async () => {
    const { context, page, problems } = await open(member);
    await page.goto(`${base}/settings/provider`);
    await page.getByText('Only the owner of this instance (the first account created on it) can change the model provider.').waitFor();
    await expect.poll(() => page.getByTestId('active-provider').textContent()).toBe('Answers with: OpenAI-compatible · gpt-test');
    expect(await page.getByRole('form', { name: 'Model provider settings' }).count()).toBe(0);
    await shot(page, '6-member');
    expect(problems).toEqual([]);
    await context.close();
  });
});

import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, signedInPage, startWidgetHostPage } from '../helpers/browser.js';
import { signUp } from '../helpers/dashboard.js';
import { makeChatbot } from '../helpers/factories.js';
import { startConversation } from '../runtime/support.js';

// The server ends every live stream after STREAM_MAX_MINUTES (here 2 s): the widget and the dashboard, in
// Chromium, reconnect by themselves and go on showing what happens, with nothing done by their user.

const MAX_MS = 2000;

describe.runIf(chromiumAvailable())('live streams recycled by the server', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let hostPage: Awaited<ReturnType<typeof startWidgetHostPage>>;
  let pageUrl: string;
  let browser: Browser;
  let bot: { id: string };

  beforeAll(async () => {
    await ensureWebBuild();
    t = await createTestApp({ streams: { perIp: 20, perConversation: 5, maxMs: MAX_MS }, widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } });
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    hostPage = await startWidgetHostPage(base, () => bot.id);
    pageUrl = hostPage.url;
    bot = await makeChatbot(tenant, { name: 'Harbour Bakery', allowed_origins: [new URL(pageUrl).origin], knowledge: [{ title: 'Hours', content: 'We open at 8:00 every day.' }] });
    expect((await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).statusCode).toBe(200);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await hostPage?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  /** Counts the page's requests to a live stream: more than one means it reconnected. */
  function streamRequests(page: Page, path: RegExp): () => number {
    let count = 0;
    page.on('request', (request) => {
      if (path.test(new URL(request.url()).pathname)) count++;
    });
    return () => count;
  }

  it('the widget reconnects after the server ends its stream and shows an operator\'s reply sent afterwards', { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const requests = streamRequests(page, /^\/widget\/v1\/conversations\/[^/]+\/events$/);
    await page.goto(pageUrl);
    await page.getByRole('button', { name: 'Open chat' }).click();
    const dialog = page.getByRole('dialog', { name: 'Harbour Bakery' });
    const box = dialog.getByRole('textbox', { name: 'Message' });
    await box.fill('When do you open?');
    await box.press('Enter');
    await dialog.locator('.msg-assistant[data-message-id]').first().waitFor();

    // Two ends later, the widget is on its third stream.
    await expect.poll(requests, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    const conversation = ((await tenant.request('GET', `/api/v1/conversations?chatbot_id=${bot.id}`)).json() as { data: { id: string }[] }).data[0]!;
    const sent = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { role: 'operator', content: 'Hi, Sam here: the oven is warm.' });
    expect(sent.statusCode, sent.body).toBe(201);
    await dialog.locator('.msg-operator', { hasText: 'Sam here' }).waitFor();
    // Shown once: the resumed streams replayed nothing already on screen.
    expect(await dialog.locator('.msg').evaluateAll((nodes) => nodes.map((node) => node.className))).toEqual(['msg msg-assistant', 'msg msg-user', 'msg msg-assistant', 'msg msg-operator']);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the dashboard\'s EventSource reconnects after the server ends it and the inbox still updates live', { timeout: 60_000 }, async () => {
    const owner = await signUp(t.app, { workspaceName: 'Recycled bakery' });
    const botId = ((await owner.request('POST', '/app/api/chatbots', { name: 'Bakery helper', instructions: 'Help.' })).json() as { id: string }).id;
    expect((await owner.request('PATCH', `/app/api/chatbots/${botId}`, { status: 'active' })).statusCode).toBe(200);
    const { context, page, problems } = await signedInPage(browser, base, owner.cookie);
    const requests = streamRequests(page, /^\/app\/api\/events$/);
    await page.goto(`${base}/conversations`);
    await page.getByText('No conversations match.', { exact: false }).waitFor();

    await expect.poll(requests, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    await startConversation(t.app, botId, { visitor: { name: 'Ada Visitor' } });
    await page.locator('table tbody tr').filter({ hasText: 'Ada Visitor' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});

import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, signedInPage, startWidgetHostPage } from '../helpers/browser.js';
import { signUp } from '../helpers/dashboard.js';
import { openSse, type SseClient } from '../helpers/sse.js';
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

// EventSource gives up for good when a reconnect is refused (here: the one place of its address taken
// meanwhile); the dashboard opens it again 30 s later (the page's clock is moved on) and refetches what is on
// screen, so a conversation started while it had no stream appears.
describe.runIf(chromiumAvailable())('the dashboard after a refused reconnect', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    await ensureWebBuild();
    t = await createTestApp({ streams: { perIp: 1, perConversation: 5, maxMs: 60 * 60_000 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('opens its stream again later and shows what happened meanwhile', { timeout: 60_000 }, async () => {
    const owner = await signUp(t.app, { workspaceName: 'Crowded office' });
    const botId = ((await owner.request('POST', '/app/api/chatbots', { name: 'Office helper', instructions: 'Help.' })).json() as { id: string }).id;
    expect((await owner.request('PATCH', `/app/api/chatbots/${botId}`, { status: 'active' })).statusCode).toBe(200);
    const { context, page, problems } = await signedInPage(browser, base, owner.cookie);
    await page.clock.install();
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/app/api/events') statuses.push(response.status());
    });
    await page.goto(`${base}/conversations`);
    await page.getByText('No conversations match.', { exact: false }).waitFor();
    await expect.poll(() => statuses).toEqual([200]);

    // The connection drops; before the browser reconnects, another tab of the same address takes the place.
    t.app.server.closeAllConnections();
    let holder: SseClient | null = null;
    await expect
      .poll(async () => {
        const attempt = await openSse(`${base}/app/api/events`, { cookie: owner.cookie });
        if (attempt.status === 200) holder = attempt;
        else attempt.close();
        return attempt.status;
      }, { timeout: 10_000 })
      .toBe(200);
    await expect.poll(() => statuses, { timeout: 15_000 }).toContain(429);

    // Meanwhile a visitor starts a conversation: nothing streams it to the dashboard.
    await startConversation(t.app, botId, { visitor: { name: 'Unstreamed Visitor' } });
    holder!.close();
    await holder!.ended;
    await page.clock.fastForward(30_000);
    await page.locator('table tbody tr').filter({ hasText: 'Unstreamed Visitor' }).waitFor();
    expect(statuses.at(-1)).toBe(200);

    // And it is live again.
    await startConversation(t.app, botId, { visitor: { name: 'Streamed Visitor' } });
    await page.locator('table tbody tr').filter({ hasText: 'Streamed Visitor' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});

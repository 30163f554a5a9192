import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { CHROMIUM, SCREENSHOTS, launchChromium } from '../helpers/browser.js';
import { makeChatbot } from '../helpers/factories.js';

const haveChromium = fs.existsSync(CHROMIUM);
const LEAD_PROMPT = 'Leave your details and we will call you back.';
const NOT_TAKING = 'This chat is not taking messages right now. Please try again later.';

// Issue 29, point 1, as a visitor sees it: the agent is paused while its conversation is open in the widget.
// Under CI a missing chromium fails the launch below: it is installed by .ci/run, never skipped there.
describe.runIf(haveChromium || process.env.CI === 'true')('the chat widget when its agent is paused', () => {
  let t: TestApp;
  let tenant: Tenant;
  let hostPage: http.Server;
  let browser: Browser;
  let bot: { id: string };

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    t = await createTestApp({ widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } });
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    hostPage = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body><h1>Shop</h1><script src="${apiUrl}/widget.js" data-chatbot-id="${bot.id}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}`;
    bot = await makeChatbot(tenant, {
      name: 'Shop assistant',
      instructions: 'Answer questions about the shop.',
      lead_capture: { enabled: true, fields: ['email'], prompt: LEAD_PROMPT },
      allowed_origins: [origin],
    });
    expect((await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).statusCode).toBe(200);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => hostPage?.close(resolve));
    await t?.close();
  });

  it('says the chat is not taking messages, keeps the text and the conversation, and refuses the lead form politely', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(`http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`);
    await page.getByRole('button', { name: 'Open chat' }).click();
    const dialog = page.getByRole('dialog', { name: 'Shop assistant' });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Hello?');
    await box.press('Enter');
    await page.locator('chat-agent-widget .msg-assistant[data-message-id]').first().waitFor();

    expect((await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'paused' })).statusCode).toBe(200);
    await box.fill('Are you still there?');
    await box.press('Enter');
    await dialog.getByRole('alert').getByText(NOT_TAKING).waitFor();
    // The text goes back into the box (nothing was stored), and no "start a new conversation" is offered.
    expect(await box.inputValue()).toBe('Are you still there?');
    expect(await dialog.getByRole('button', { name: 'Start a new conversation' }).count()).toBe(0);
    expect(await page.locator('chat-agent-widget .msg-user').count()).toBe(1);

    await dialog.getByRole('button', { name: 'Leave your contact details' }).click();
    await dialog.getByLabel('Email').fill('late@example.com');
    await dialog.getByRole('button', { name: 'Send details' }).click();
    await dialog.locator('.lead .error').getByText(NOT_TAKING).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-agent-paused.png'), animations: 'disabled' });
    expect(failures).toEqual([]);
    await context.close();
  });
});

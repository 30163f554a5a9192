import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { makeChatbot } from '../helpers/factories.js';

// Issue 32 in a real browser: the widget follows its conversation live, so an operator's reply appears
// without the visitor doing anything, and a conversation closed by the team says so.

describe.runIf(chromiumAvailable())('the widget follows its conversation live', () => {
  let t: TestApp;
  let tenant: Tenant;
  let hostPage: http.Server;
  let pageUrl: string;
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
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour Bakery</title></head>
<body><h1>Harbour Bakery</h1><script src="${apiUrl}/widget.js" data-chatbot-id="${bot.id}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`;
    bot = await makeChatbot(tenant, { name: 'Harbour Bakery', allowed_origins: [new URL(pageUrl).origin], knowledge: [{ title: 'Hours', content: 'We open at 8:00 every day.' }] });
    expect((await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).statusCode).toBe(200);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => hostPage?.close(resolve));
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('shows an operator\'s reply and the conversation closing, with nothing sent by the visitor', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(pageUrl);
    await page.getByRole('button', { name: 'Open chat' }).click();
    const dialog = page.getByRole('dialog', { name: 'Harbour Bakery' });
    const box = dialog.getByRole('textbox', { name: 'Message' });
    await box.fill('When do you open?');
    await box.press('Enter');
    await dialog.locator('.msg-assistant[data-message-id]').first().waitFor();

    // The team answers from its side (the API, as an operator): the visitor's widget shows it by itself.
    const conversation = ((await tenant.request('GET', `/api/v1/conversations?chatbot_id=${bot.id}`)).json() as { data: { id: string }[] }).data[0]!;
    const sent = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { role: 'operator', content: 'Hi, Sam here: we also open at 7:00 on market days.' });
    expect(sent.statusCode, sent.body).toBe(201);
    const operator = dialog.locator('.msg-operator', { hasText: 'Sam here' });
    await operator.waitFor();
    expect(await operator.getAttribute('data-message-id')).toBe((sent.json() as { id: string }).id);
    // Shown once, after the exchange, in order.
    expect(await dialog.locator('.msg').evaluateAll((nodes) => nodes.map((node) => node.className))).toEqual(['msg msg-assistant', 'msg msg-user', 'msg msg-assistant', 'msg msg-operator']); // the welcome message first
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-live-1-operator-reply.png'), animations: 'disabled' });

    // The team closes the conversation: the widget says so and offers a new one.
    await t.app.services.conversations.close(systemContext(tenant.workspaceId, 'test'), conversation.id);
    await dialog.getByRole('button', { name: 'Start a new conversation' }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-live-2-closed.png'), animations: 'disabled' });
    expect(problems).toEqual([]);
    await context.close();
  });
});

import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { startConversation, widget } from '../runtime/support.js';

// Issue 32 in the dashboard, in Chromium: the conversation list shows a new conversation, its unread
// count and a request for a person without a reload, and an open conversation shows new messages.

describe.runIf(chromiumAvailable())('dashboard: the inbox updates live', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: DashboardUser;
  let botId: string;

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    t = await createTestApp({ widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
    botId = (await owner.request('POST', '/app/api/chatbots', { name: 'Bakery helper', knowledge: [{ title: 'Hours', content: 'The bakery opens at 7am.' }] })).json().id;
    expect((await owner.request('PATCH', `/app/api/chatbots/${botId}`, { status: 'active' })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const say = async (conversation: { conversation_id: string; visitor_token: string }, content: string) => {
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${conversation.conversation_id}/messages`, { token: conversation.visitor_token, body: { content } });
    expect(response.statusCode, response.body).toBe(201);
  };

  it('a new conversation, its messages and a request for a person appear without a reload', { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    await context.addCookies([{ name: 'sid', value: owner.cookie.replace(/^sid=/, ''), url: base }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${base}/conversations`);
    await page.getByText('No conversations match.', { exact: false }).waitFor();
    const loads: string[] = [];
    page.on('framenavigated', (frame) => loads.push(frame.url()));

    // A visitor starts chatting on the website: the row appears, with one unread message.
    const visitor = await startConversation(t.app, botId, { visitor: { name: 'Ada Visitor' } });
    await say(visitor, 'When do you open?');
    const row = page.locator('table tbody tr').filter({ hasText: 'Ada Visitor' });
    await row.waitFor();
    await row.getByLabel('1 new').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByLabel('1 with new messages').waitFor();
    // The visitor asks for a person: the row says it is waiting.
    expect((await widget(t.app, 'POST', `/widget/v1/conversations/${visitor.conversation_id}/handoff`, { token: visitor.visitor_token })).statusCode).toBe(200);
    await row.getByRole('img', { name: /^Waiting for a person since / }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-live-1-inbox.png'), fullPage: true });

    // Opened, the conversation is read; a new visitor message appears in it as it is sent.
    await row.getByRole('link').click();
    await page.waitForURL(`${base}/conversations/${visitor.conversation_id}`);
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await transcript.getByText('When do you open?').waitFor();
    await say(visitor, 'Is anyone there? I need a cake for Saturday.');
    await transcript.getByText('I need a cake for Saturday.', { exact: false }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByLabel(/with new messages/).count()).toBe(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-live-2-conversation.png'), fullPage: true });
    // Nothing was reloaded: one page, moved within by the app.
    expect(loads.filter((url) => !url.startsWith(`${base}/conversations`))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});

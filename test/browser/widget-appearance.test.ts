import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { CHROMIUM, SCREENSHOTS, launchChromium } from '../helpers/browser.js';
import { makeChatbot } from '../helpers/factories.js';

const haveChromium = fs.existsSync(CHROMIUM);
const AVATAR = 'https://avatars.example/ada.svg';
const AVATAR_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="32" fill="#f59e0b"/><circle cx="32" cy="26" r="12" fill="#fff"/></svg>';

// Issue 33 §3 and §4 as a visitor sees them: the agent's look (colour, left position, labelled launcher,
// avatar, title) on a site of another origin, changed through the API and shown at the next load; and a
// site the agent does not allow, where the widget says so and tells the developer in the console.
describe.runIf(haveChromium || process.env.CI === 'true')('the widget\'s appearance, and a site that is not allowed', () => {
  let t: TestApp;
  let tenant: Tenant;
  let hostPage: http.Server;
  let siteUrl: string;
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
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Garden shop</title></head>
<body style="margin:2rem;font:16px system-ui"><h1>Garden shop</h1><p>Seeds, tools and advice.</p>
<script src="${apiUrl}/widget.js" data-chatbot-id="${bot.id}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`;
    bot = await makeChatbot(tenant, {
      name: 'Garden helper',
      instructions: 'Answer questions about the garden shop.',
      knowledge: [{ title: 'Hours', content: 'The garden shop is open every day from 9:00 to 17:00.' }],
      // Typed as people do; stored normalized.
      allowed_origins: [siteUrl.toUpperCase().replace('HTTP://', 'http://')],
      appearance: { color: '#0b8043', position: 'left', launcher: { label: 'Ask us', icon: 'sparkle' }, avatar_url: AVATAR, title: 'Ask Ada' },
    });
    expect((await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' })).statusCode).toBe(200);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => hostPage?.close(resolve));
    await t?.close();
  });

  async function newPage(options: { locale?: string } = {}): Promise<{ context: BrowserContext; page: Page; warnings: string[]; failures: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, ...options });
    context.setDefaultTimeout(15_000);
    // The avatar's host is on the internet: the browser gets it from here instead.
    await context.route('https://avatars.example/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: AVATAR_SVG }));
    const page = await context.newPage();
    const warnings: string[] = [];
    const failures: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'warning') warnings.push(message.text());
    });
    page.on('pageerror', (error) => failures.push(error.message));
    return { context, page, warnings, failures };
  }

  // Run in the page, where the DOM exists (the tests' TypeScript has no DOM types): a computed style, an image's loaded width.
  type InPage = { getComputedStyle(node: unknown, pseudo: string | null): { getPropertyValue(name: string): string } };
  const style = (page: Page, selector: string, property: string, pseudo: string | null = null) =>
    page.locator(selector).evaluate((node, [name, before]) => (globalThis as unknown as InPage).getComputedStyle(node, before).getPropertyValue(name), [property, pseudo] as const);
  const loadedWidth = (page: Page, selector: string) =>
    page.locator(selector).evaluate((node) => {
      const img = node as unknown as { complete: boolean; naturalWidth: number };
      return img.complete ? img.naturalWidth : 0;
    });

  it('applies the colour, the left position, the labelled launcher, the avatar and the title; a change shows at the next load', async () => {
    const { context, page, failures } = await newPage();
    await page.goto(siteUrl);
    const launcher = page.getByRole('button', { name: 'Ask us' });
    await launcher.waitFor();
    expect(await style(page, 'chat-agent-widget .launcher', 'background-color')).toBe('rgb(11, 128, 67)');
    expect(await style(page, 'chat-agent-widget .launcher', 'color')).toBe('rgb(255, 255, 255)');
    const launcherBox = (await launcher.boundingBox())!;
    expect(launcherBox.x).toBeLessThan(40);
    expect(await launcher.textContent()).toBe('Ask us');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-appearance-launcher.png'), animations: 'disabled' });

    await launcher.click();
    const dialog = page.getByRole('dialog', { name: 'Ask Ada' });
    await dialog.waitFor();
    expect((await dialog.boundingBox())!.x).toBeLessThan(40);
    expect(await style(page, 'chat-agent-widget header', 'background-color')).toBe('rgb(11, 128, 67)');
    await expect.poll(() => loadedWidth(page, 'chat-agent-widget header img.avatar')).toBe(64);
    expect(await page.locator('chat-agent-widget header img.avatar').getAttribute('src')).toBe(AVATAR);

    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('When are you open?');
    await box.press('Enter');
    await page.locator('chat-agent-widget .msg-assistant[data-message-id]').first().waitFor();
    expect(await style(page, 'chat-agent-widget .msg-user', 'background-color')).toBe('rgb(11, 128, 67)');
    expect(await style(page, 'chat-agent-widget .msg-user', 'color')).toBe('rgb(255, 255, 255)');
    // The avatar beside each of the agent's messages.
    expect(await style(page, 'chat-agent-widget .msg-assistant[data-message-id]', 'background-image', '::before')).toContain(AVATAR);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-appearance-open.png'), animations: 'disabled' });

    // Changed through the API only: the next page load shows it (light colour → near-black text), on the right, as an icon.
    const patched = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { appearance: { color: '#ffcc00', position: 'right', launcher: { label: null, icon: 'question' }, title: null } });
    expect(patched.statusCode, patched.body).toBe(200);
    await page.reload();
    const iconLauncher = page.getByRole('button', { name: 'Open chat' });
    await iconLauncher.waitFor();
    expect(await style(page, 'chat-agent-widget .launcher', 'background-color')).toBe('rgb(255, 204, 0)');
    expect(await style(page, 'chat-agent-widget .launcher', 'color')).toBe('rgb(17, 24, 39)');
    expect((await iconLauncher.boundingBox())!.x).toBeGreaterThan(1000);
    await iconLauncher.click();
    await page.getByRole('dialog', { name: 'Garden helper' }).waitFor();
    expect(await style(page, 'chat-agent-widget .msg-user', 'color')).toBe('rgb(17, 24, 39)');
    // On white, a light colour is not used for text: the suggested chips and links stay readable.
    expect(await style(page, 'chat-agent-widget .root', '--accent-text')).toBe('#1c2230');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-appearance-changed.png'), animations: 'disabled' });
    expect(failures).toEqual([]);
    await context.close();
  });

  it('the hosted chat page shows the same look', async () => {
    await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { appearance: { color: '#7b1fa2', title: 'Garden desk' } });
    const { context, page, failures } = await newPage();
    await page.goto(`${new URL(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`).origin}/chat/${bot.id}`);
    await page.getByRole('dialog', { name: 'Garden desk' }).waitFor();
    expect(await page.title()).toBe('Chat with Garden desk');
    expect(await style(page, 'chat-agent-widget header', 'background-color')).toBe('rgb(123, 31, 162)');
    await expect.poll(() => loadedWidth(page, 'chat-agent-widget header img.avatar')).toBe(64);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-appearance-hosted-page.png'), animations: 'disabled' });
    expect(failures).toEqual([]);
    await context.close();
  });

  it('on a site that is not allowed: "Chat is not enabled on this website." in the visitor\'s language, and one console hint', async () => {
    // The same page under another origin (localhost is not 127.0.0.1 to the browser).
    const stranger = siteUrl.replace('127.0.0.1', 'localhost');
    const strangerOrigin = new URL(stranger).origin;
    const english = await newPage();
    await english.page.goto(stranger);
    await english.page.getByRole('button', { name: 'Open chat' }).click();
    await english.page.getByRole('alert').getByText('Chat is not enabled on this website.').waitFor();
    expect(await english.page.getByText("We couldn't reach the chat").count()).toBe(0);
    expect(await english.page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    const hints = english.warnings.filter((text) => text.startsWith('[chat widget]'));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain(strangerOrigin);
    expect(hints[0]).toContain('Allowed origins');
    expect(hints[0]).toContain(bot.id);
    await english.page.screenshot({ path: path.join(SCREENSHOTS, 'widget-not-allowed.png'), animations: 'disabled' });
    expect(english.failures).toEqual([]);
    await english.context.close();

    const spanish = await newPage({ locale: 'es-ES' });
    await spanish.page.goto(stranger);
    await spanish.page.getByRole('button', { name: 'Abrir chat' }).click();
    await spanish.page.getByRole('alert').getByText('El chat no está habilitado en este sitio web.').waitFor();
    await spanish.context.close();
    const conversations = (await tenant.request('GET', `/api/v1/conversations?chatbot_id=${bot.id}`)).json() as { data: unknown[] };
    expect(conversations.data).toHaveLength(2); // the site's and the hosted page's; none from the refused site
  });
});

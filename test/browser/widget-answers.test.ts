import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { makeChatbot } from '../helpers/factories.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';

// Issue 31 in a real browser: the widget shows an agent's suggested questions, renders answers as safe
// Markdown (a hostile payload in the knowledge stays inert), lists the answer's sources, takes a rating and
// a request for a person, and speaks the agent's language (or the browser's, under `auto`).

const QUESTION = 'How much do almond croissants cost?';
const DELIVERY_QUESTION = 'Do you deliver bread?';
const SHOP_URL = 'https://shop.example.com/almond';
// The knowledge the first question is answered from: its one list line holds bold text, an https link, a
// javascript: link and raw HTML that would set window.__pwned if it ever ran. The builtin provider quotes
// the sentence that answers the question (or, in its older form, the whole entry): either way, this line.
const MENU = [
  'Our pastries are baked every morning.',
  '',
  `- **Almond croissants** cost 3.20 EUR each; order them in [our online shop](${SHOP_URL}) and never [through this link](javascript:window.__pwned=1) <img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`,
  '- Plain croissants cost 1.80 EUR each.',
  '',
  '| Bread | Price |',
  '|---|---|',
  '| Baguette | 1.40 EUR |',
  '| Sourdough loaf | 4.50 EUR |',
].join('\n');
// Answered from the menu's table: its row, under the table's header.
const TABLE_QUESTION = 'How much is a sourdough loaf?';

// In-page code is written as expressions: the test's TypeScript has no DOM types.
const SHADOW = "document.querySelector('chat-agent-widget').shadowRoot";

describe.runIf(chromiumAvailable())('the widget renders answers, sources, ratings and handoff, in five languages', () => {
  let t: TestApp;
  let tenant: Tenant;
  let apiUrl: string;
  let site: TestSite;
  let hostPage: http.Server;
  let pageUrl: string;
  let browser: Browser;
  let bot: { id: string };
  let spanishBot: { id: string };

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    site = await startSite({
      pages: { '/delivery': htmlPage('Delivery', 'We deliver fresh bread within 5 km of the harbour every morning before eight.') },
    });
    const defaults = loadConfig({});
    t = await createTestApp({
      // The website source is read by the job runner, and the local site is on 127.0.0.1.
      runtime: { ...defaults.runtime, pollIntervalMs: 100 },
      sources: { ...defaults.sources, allowPrivateHosts: true },
      widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 },
    });
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

    hostPage = http.createServer((request, response) => {
      const id = new URL(request.url ?? '/', 'http://host').searchParams.get('bot') ?? bot.id;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour Bakery</title></head>
<body><h1>Harbour Bakery</h1><p>Questions? Use the chat in the corner.</p>
<script src="${apiUrl}/widget.js" data-chatbot-id="${id}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`;

    bot = await makeChatbot(tenant, {
      name: 'Harbour Bakery',
      welcome_message: 'Hi! Ask me about our **pastries**.',
      suggested_questions: [QUESTION, DELIVERY_QUESTION],
      allowed_origins: [new URL(pageUrl).origin],
    });
    const menu = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'text', title: 'Croissant menu', content: MENU });
    expect(menu.statusCode, menu.body).toBe(201);
    const website = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/delivery` });
    expect(website.statusCode, website.body).toBe(201);
    for (let tries = 0; ; tries++) {
      const { status } = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${website.json().id as string}`)).json() as { status: string };
      if (status === 'ready') break;
      if (tries > 200 || status === 'failed') throw new Error(`the website source did not become ready: ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    spanishBot = await makeChatbot(tenant, {
      name: 'Panadería del Puerto',
      language: 'es',
      knowledge: [{ title: 'Horario', content: 'Abrimos de lunes a viernes de 8:00 a 18:00 y los sábados de 9:00 a 13:00.' }],
    });
    for (const id of [bot.id, spanishBot.id]) {
      const published = await tenant.request('PATCH', `/api/v1/chatbots/${id}`, { status: 'active' });
      expect(published.statusCode, published.body).toBe(200);
    }
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => hostPage?.close(resolve));
    await site?.close();
    await t?.close();
  });

  const api = async (url: string) => {
    const response = await tenant.request('GET', `/api/v1${url}`);
    expect(response.statusCode, url).toBe(200);
    return response.json() as { data: Array<Record<string, unknown>> } & Record<string, unknown>;
  };
  const inPage = <T>(page: Page, expression: string) => page.evaluate<T>(expression);
  const answers = (page: Page) => page.locator('chat-agent-widget .msg-assistant[data-message-id]');

  async function newPage(locale: string, url = pageUrl): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext({ locale, viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(url);
    return { page, problems, close: () => context.close() };
  }

  it('offers the suggested questions, answers one as safe Markdown with its sources, takes a rating and a request for a person', async () => {
    const { page, problems, close } = await newPage('en-US');
    await page.getByRole('button', { name: 'Open chat' }).click();
    const dialog = page.getByRole('dialog', { name: 'Harbour Bakery' });
    // The welcome message is the agent's words too: Markdown.
    await dialog.locator('.msg-assistant strong', { hasText: 'pastries' }).waitFor();

    const chips = dialog.getByRole('group', { name: 'Suggested questions' });
    await chips.getByRole('button', { name: QUESTION }).waitFor();
    expect(await chips.getByRole('button').allTextContents()).toEqual([QUESTION, DELIVERY_QUESTION]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-answers-1-suggested.png'), animations: 'disabled' });

    // A chip sends its question; the chips are gone once the visitor has asked something.
    await chips.getByRole('button', { name: QUESTION }).click();
    const answer = answers(page).first();
    await answer.waitFor();
    expect(await dialog.locator('.msg-user').allTextContents()).toEqual([QUESTION]);
    expect(await chips.isVisible()).toBe(false);

    // Markdown from the knowledge: a list item with bold text and a link that opens a new tab...
    await answer.locator('ul > li strong', { hasText: 'Almond croissants' }).waitFor();
    const shop = answer.getByRole('link', { name: 'our online shop' });
    expect(await shop.getAttribute('href')).toBe(SHOP_URL);
    expect(await shop.getAttribute('target')).toBe('_blank');
    expect(await shop.getAttribute('rel')).toBe('noopener noreferrer');
    // ...while the javascript: link keeps only its words, and the raw HTML is shown as text, never run.
    expect(await answer.textContent()).toContain('through this link');
    expect(await answer.getByRole('link').count()).toBe(1);
    expect(await answer.textContent()).toContain('<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>');
    await page.waitForTimeout(300); // an image's onerror would have fired by now
    expect(await inPage(page, `window.__pwned === undefined && ${SHADOW}.querySelectorAll('img, script, [onerror]').length === 0`)).toBe(true);
    expect(await inPage(page, `[...${SHADOW}.querySelectorAll('a')].map((a) => a.protocol).filter((p) => p !== 'https:' && p !== 'http:')`)).toEqual([]);

    // Its source: the hand-written text has no address, so its title is shown as text.
    const meta = dialog.locator('.meta').first();
    expect(await meta.locator('.sources').textContent()).toBe('Sources:Croissant menu');
    expect(await meta.locator('.sources a').count()).toBe(0);

    // A second question, answered from the website: its source is a link to the page.
    const box = dialog.getByRole('textbox', { name: 'Message' });
    await box.fill(DELIVERY_QUESTION);
    await box.press('Enter');
    await answers(page).nth(1).waitFor();
    const pageLink = dialog.locator('.meta').nth(1).locator('.sources').getByRole('link', { name: 'Delivery' });
    expect(await pageLink.getAttribute('href')).toBe(`${site.url}/delivery`);
    expect(await pageLink.getAttribute('target')).toBe('_blank');
    // A price table's row is answered under the table's header, and shown as a table.
    await box.fill(TABLE_QUESTION);
    await box.press('Enter');
    const tableAnswer = answers(page).nth(2);
    await tableAnswer.locator('table tbody td', { hasText: 'Sourdough loaf' }).waitFor();
    expect(await tableAnswer.locator('thead th').allTextContents()).toEqual(['Bread', 'Price']);
    expect(await tableAnswer.locator('tbody tr').allTextContents()).toEqual(['Sourdough loaf4.50 EUR']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-answers-2-markdown-and-sources.png'), animations: 'disabled' });

    // The conversation as the API has it: the answers the widget shows carry the same sources.
    const conversation = (await api(`/conversations?chatbot_id=${bot.id}`)).data[0]!;
    const stored = async () => (await api(`/conversations/${conversation.id as string}/messages`)).data.filter((m) => m.role === 'assistant');
    const [first, second] = await stored();
    expect(await answer.getAttribute('data-message-id')).toBe(first!.id);
    expect(first!.sources).toMatchObject([{ title: 'Croissant menu' }]);
    expect(second!.sources).toMatchObject([{ title: 'Delivery', url: `${site.url}/delivery` }]);

    // Rating: thumbs up, then down with a comment; the latest counts, and the server has it.
    const helpful = meta.getByRole('button', { name: 'Helpful', exact: true });
    const unhelpful = meta.getByRole('button', { name: 'Not helpful', exact: true });
    const comment = meta.getByRole('textbox', { name: 'What was missing? (optional)' });
    expect([await helpful.getAttribute('aria-pressed'), await unhelpful.getAttribute('aria-pressed')]).toEqual(['false', 'false']);
    expect(await comment.isVisible()).toBe(false); // asked for after a thumbs down only
    await helpful.click();
    await meta.getByText('Thanks for your feedback!').waitFor();
    expect(await helpful.getAttribute('aria-pressed')).toBe('true');
    expect((await stored())[0]!.feedback).toMatchObject({ rating: 'up', comment: null });

    expect(await comment.isVisible()).toBe(false);
    await unhelpful.click();
    await comment.waitFor();
    expect([await helpful.getAttribute('aria-pressed'), await unhelpful.getAttribute('aria-pressed')]).toEqual(['false', 'true']);
    await expect.poll(async () => ((await stored())[0]!.feedback as { rating: string }).rating).toBe('down');
    await comment.fill('Does the price include the box?');
    await comment.press('Enter');
    await meta.getByText('Thanks for your feedback!').waitFor();
    expect(await comment.isVisible()).toBe(false);
    expect((await stored())[0]!.feedback).toMatchObject({ rating: 'down', comment: 'Does the price include the box?' });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-answers-3-rated.png'), animations: 'disabled' });

    // A person, please: the agent's answer is shown, the button is spent, the conversation waits for a person.
    const handoff = dialog.getByRole('button', { name: 'Talk to a person' });
    await handoff.click();
    await answers(page).nth(3).waitFor();
    expect(await handoff.isDisabled()).toBe(true);
    const handoffReply = (await stored())[3]!;
    expect(await answers(page).nth(3).textContent()).toBe(handoffReply.content);
    expect((await api(`/conversations/${conversation.id as string}`)).handoff_requested_at).toEqual(expect.any(String));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-answers-4-handoff.png'), animations: 'disabled' });

    // After a reload the transcript comes back rendered, with the rating and the spent button as they were.
    await page.reload();
    await page.getByRole('button', { name: 'Open chat' }).click();
    await answers(page).nth(3).waitFor();
    await answers(page).first().locator('ul > li strong').waitFor();
    await answers(page).nth(2).locator('table td', { hasText: 'Sourdough loaf' }).waitFor();
    expect(await dialog.locator('.meta').first().getByRole('button', { name: 'Not helpful', exact: true }).getAttribute('aria-pressed')).toBe('true');
    expect(await dialog.getByRole('button', { name: 'Talk to a person' }).isDisabled()).toBe(true);
    expect(await dialog.getByRole('group', { name: 'Suggested questions' }).isVisible()).toBe(false);
    expect(await inPage(page, 'window.__pwned === undefined')).toBe(true);

    expect(problems).toEqual([]);
    await close();
  });

  it("a Spanish agent's hosted page speaks Spanish, whatever the browser's language", async () => {
    const { page, problems, close } = await newPage('en-US', `${apiUrl}/chat/${spanishBot.id}`);
    expect(await page.evaluate('document.documentElement.lang')).toBe('es');
    const dialog = page.getByRole('dialog', { name: 'Panadería del Puerto' });
    const box = dialog.getByRole('textbox', { name: 'Mensaje' });
    await box.waitFor();
    expect(await box.getAttribute('placeholder')).toBe('Escribe tu mensaje…');
    expect(await dialog.getByRole('button', { name: 'Enviar' }).isVisible()).toBe(true);
    expect(await dialog.getByRole('button', { name: 'Hablar con una persona' }).isVisible()).toBe(true);

    await box.fill('¿Cuál es el horario de los sábados?');
    await box.press('Enter');
    await answers(page).first().waitFor();
    const meta = dialog.locator('.meta').first();
    expect(await meta.locator('.sources').textContent()).toBe('Fuentes:Horario');
    expect(await meta.getByRole('button', { name: 'Útil', exact: true }).isVisible()).toBe(true);
    await meta.getByRole('button', { name: 'No útil', exact: true }).click();
    await meta.getByRole('textbox', { name: '¿Qué faltó? (opcional)' }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-answers-5-spanish.png'), animations: 'disabled' });
    expect(problems).toEqual([]);
    await close();
  });

  it("an agent on `auto` follows the browser's language, and English when it has not got that one", async () => {
    const french = await newPage('fr-FR');
    await french.page.getByRole('button', { name: 'Ouvrir le chat' }).click();
    const box = french.page.getByRole('textbox', { name: 'Message' });
    await box.waitFor();
    expect(await box.getAttribute('placeholder')).toBe('Écrivez votre message…');
    await french.page.getByRole('button', { name: 'Parler à une personne' }).waitFor();
    await french.page.getByRole('group', { name: 'Questions suggérées' }).waitFor();
    await french.page.screenshot({ path: path.join(SCREENSHOTS, 'widget-answers-6-french-auto.png'), animations: 'disabled' });
    expect(french.problems).toEqual([]);
    await french.close();

    const japanese = await newPage('ja-JP');
    await japanese.page.getByRole('button', { name: 'Open chat' }).click();
    expect(await japanese.page.getByRole('textbox', { name: 'Message' }).getAttribute('placeholder')).toBe('Type your message…');
    await japanese.close();
  });
});

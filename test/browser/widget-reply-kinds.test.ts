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

// The kinds of reply in a real browser: a best-matches reply shows its pages as links; the contact form opens
// from the answer's `outcome` (an answer that quotes "phone number" from the knowledge does not open it); a
// Spanish visitor gets the agent's Spanish welcome and suggestions, and Spanish declines and handoffs.

const PHONE = 'You can reach the front desk by phone number 01632 960 418, Monday to Friday.';
const LOOP = 'The Coastal Loop leaves at 10:00 from the harbour and takes two hours.';
const UNSURE = 'Would the Coastal Loop suit my elderly grandmother with weak knees?';
const SPANISH = { welcome_message: '¡Hola! Pregúntame por nuestras rutas.', suggested_questions: ['¿A qué hora sale la ruta?', '¿Cuánto dura la ruta?'] };

describe.runIf(chromiumAvailable())('the widget and the kinds of reply', () => {
  let t: TestApp;
  let tenant: Tenant;
  let site: TestSite;
  let hostPage: http.Server;
  let pageUrl: string;
  let browser: Browser;
  let bot: { id: string };

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    site = await startSite({ pages: { '/tours/coastal-loop': htmlPage('Coastal Loop', LOOP) } });
    const defaults = loadConfig({});
    t = await createTestApp({
      runtime: { ...defaults.runtime, pollIntervalMs: 100 },
      sources: { ...defaults.sources, allowPrivateHosts: true },
      widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 },
    });
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    hostPage = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour Tours</title></head>
<body><h1>Harbour Tours</h1><script src="${apiUrl}/widget.js" data-chatbot-id="${bot.id}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`;

    bot = await makeChatbot(tenant, {
      name: 'Harbour Tours',
      welcome_message: 'Hi! Ask me about our tours.',
      suggested_questions: ['When does the Coastal Loop leave?'],
      translations: { es: SPANISH },
      knowledge: [{ title: 'Contact', content: PHONE }],
      lead_capture: { enabled: true, fields: ['name', 'email'], prompt: null },
      allowed_origins: [new URL(pageUrl).origin],
    });
    const website = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/tours/coastal-loop` });
    expect(website.statusCode, website.body).toBe(201);
    for (let tries = 0; ; tries++) {
      const { status } = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${website.json().id as string}`)).json() as { status: string };
      if (status === 'ready') break;
      if (tries > 200 || status === 'failed') throw new Error(`the website source did not become ready: ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const published = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
    expect(published.statusCode, published.body).toBe(200);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => hostPage?.close(resolve));
    await site?.close();
    await t?.close();
  });

  async function openChat(locale: string, openLabel: string): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext({ locale, viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(pageUrl);
    await page.getByRole('button', { name: openLabel }).click();
    return { page, problems, close: () => context.close() };
  }
  const answers = (page: Page) => page.locator('chat-agent-widget .msg-assistant[data-message-id]');
  async function ask(page: Page, box: string, text: string, index: number) {
    const input = page.getByRole('textbox', { name: box });
    await input.fill(text);
    await input.press('Enter');
    const answer = answers(page).nth(index);
    await answer.waitFor();
    return answer;
  }

  it('opens the contact form from the outcome: not for an answer quoting "phone number", yes for best matches, whose pages are links', async () => {
    const { page, problems, close } = await openChat('en-US', 'Open chat');
    const dialog = page.getByRole('dialog', { name: 'Harbour Tours' });
    const form = dialog.getByLabel('Name');

    const phone = await ask(page, 'Message', 'What is your phone number?', 0);
    expect(await phone.textContent()).toContain('phone number 01632 960 418');
    await page.waitForTimeout(300);
    expect(await form.isVisible()).toBe(false);

    const unsure = await ask(page, 'Message', UNSURE, 1);
    expect(await unsure.textContent()).toContain("I'm not sure, but these may help:");
    const link = unsure.getByRole('link', { name: 'Coastal Loop' });
    expect(await link.getAttribute('href')).toBe(`${site.url}/tours/coastal-loop`);
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await unsure.locator('li').textContent()).toContain(LOOP);
    // The page is a link in the answer already: it is not listed again under "Sources".
    expect(await dialog.locator('.meta').nth(1).locator('.sources').count()).toBe(0);
    await form.waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-reply-kinds-1-best-matches.png'), animations: 'disabled' });

    // The API has the same outcomes.
    const conversation = (await tenant.request('GET', `/api/v1/conversations?chatbot_id=${bot.id}`)).json().data[0] as { id: string };
    const messages = (await tenant.request('GET', `/api/v1/conversations/${conversation.id}/messages`)).json().data as { role: string; outcome: string | null }[];
    expect(messages.filter((message) => message.role === 'assistant').map((message) => message.outcome)).toEqual(['answered', 'best_matches']);
    expect(problems).toEqual([]);
    await close();
  });

  it('speaks Spanish to a Spanish visitor: welcome, suggestions, a decline and the handoff message', async () => {
    const { page, problems, close } = await openChat('es-ES', 'Abrir chat');
    const dialog = page.getByRole('dialog', { name: 'Harbour Tours' });
    await dialog.getByText(SPANISH.welcome_message).waitFor();
    const chips = dialog.getByRole('group', { name: 'Preguntas sugeridas' });
    await chips.getByRole('button').first().waitFor();
    expect(await chips.getByRole('button').allTextContents()).toEqual(SPANISH.suggested_questions);

    const declined = await ask(page, 'Mensaje', '¿Vendéis helicópteros?', 0);
    expect(await declined.textContent()).toMatch(/^Lo siento, no tengo información sobre eso\. Si nos dejas tu nombre y correo electrónico/);
    await dialog.getByLabel('Nombre').waitFor();

    await dialog.getByRole('button', { name: 'Hablar con una persona' }).click();
    const handoff = answers(page).nth(1);
    await handoff.waitFor();
    expect(await handoff.textContent()).toMatch(/^Por supuesto\. He avisado al equipo y una persona te responderá aquí\./);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-reply-kinds-2-spanish.png'), animations: 'disabled' });
    expect(problems).toEqual([]);
    await close();
  });
});

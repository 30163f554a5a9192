import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { dropDatabase } from '../helpers/database.js';
import { uniqueEmail } from '../helpers/dashboard.js';
import { freePort } from '../helpers/processes.js';

const hasChromium = chromiumAvailable();
const SITE = 'https://www.bakery.example';

// The home page in a real browser: a new workspace sees every step open and an empty week; after the real
// actions (an agent, a source, publishing, a visitor in the widget on a website, an API key) every step is
// ticked and the week counts the conversation and the lead. Screenshots at 1280 and 375 px.
describe.skipIf(!hasChromium)('home page in the browser', () => {
  let app: FastifyInstance;
  let databaseEnv: Record<string, string>;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = testConfig({ publicUrl: base });
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

  /** The home page at both widths: a full-page screenshot of each, and no horizontal scrolling at 375 px. */
  async function shots(page: Page, name: string) {
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 860 });
      await page.screenshot({ path: path.join(SCREENSHOTS, `home-${name}-${width}.png`), fullPage: true });
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
    }
    await page.setViewportSize({ width: 1280, height: 860 });
  }

  /** Calls /app/api from the page, as the dashboard does (session cookie, CSRF token). */
  function call(page: Page, csrf: string, method: string, url: string, body?: unknown) {
    return page.evaluate(
      async ({ method, url, body, csrf }) => {
        const response = await fetch(`/app/api${url}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      },
      { method, url, body, csrf },
    );
  }

  it('ticks the steps from the real state and shows the week', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    const signUp = await page.evaluate(async (email) => {
      const response = await fetch('/app/api/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'a long enough password', workspace_name: 'Harbour Bakery' }),
      });
      return { status: response.status, body: (await response.json()) as { csrf_token: string } };
    }, uniqueEmail('home'));
    expect(signUp.status).toBe(201);
    const csrf = signUp.body.csrf_token;

    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Welcome to Harbour Bakery' }).waitFor();
    await page.getByRole('heading', { name: 'Getting started: 0 of 5 done' }).waitFor();
    expect(await page.locator('.steps li').count()).toBe(5);
    expect(await page.locator('.steps li.done').count()).toBe(0);
    expect(await page.locator('.totals dd').allTextContents()).toEqual(['0', '0', '0', '–']);
    await page.getByRole('link', { name: 'Create your first agent' }).waitFor();
    await shots(page, 'new');

    const agent = await call(page, csrf, 'POST', '/chatbots', { name: 'Bread helper', instructions: 'Answer about our bread.' });
    expect(agent.status).toBe(201);
    const id = agent.body.id as string;
    await page.reload();
    await page.getByRole('heading', { name: 'Getting started: 1 of 5 done' }).waitFor();
    expect(await page.getByRole('link', { name: 'Add a source' }).getAttribute('href')).toBe(`/agents/${id}#sources`);

    expect((await call(page, csrf, 'POST', `/chatbots/${id}/sources`, { type: 'text', title: 'Hours', content: 'We bake from 6am to 2pm.' })).status).toBe(201);
    expect((await call(page, csrf, 'PATCH', `/chatbots/${id}`, { status: 'active', allowed_origins: [SITE] })).status).toBe(200);
    const started = await app.inject({
      method: 'POST',
      url: `/widget/v1/chatbots/${id}/conversations`,
      headers: { origin: SITE, 'content-type': 'application/json' },
      payload: JSON.stringify({ visitor: { name: 'Ada' } }),
    });
    expect(started.statusCode, started.body).toBe(201);
    expect((await call(page, csrf, 'POST', '/leads', { name: 'Ada', email: 'ada@example.com' })).status).toBe(201);
    await page.reload();
    await page.getByRole('heading', { name: 'Getting started: 4 of 5 done' }).waitFor();
    expect(await page.locator('.steps li:not(.done) h3').allTextContents()).toEqual(['Connect your systems']);

    expect((await call(page, csrf, 'POST', '/api-keys', { name: 'shop', scopes: ['leads:read'] })).status).toBe(201);
    await page.reload();
    await page.getByRole('heading', { name: 'Getting started: all done' }).waitFor();
    expect(await page.locator('.steps li.done').count()).toBe(5);
    expect(await page.locator('.steps li.done h3').allTextContents()).toEqual([
      'Create your first agent (done)',
      'Teach it your business (done)',
      'Publish it (done)',
      'Put it on your website (done)',
      'Connect your systems (done)',
    ]);
    expect(await page.locator('.totals dd').allTextContents()).toEqual(['1', '0', '1', '–']);
    await shots(page, 'done');
    await context.close();
  });
});

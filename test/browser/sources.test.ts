import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { testConfig } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { dropDatabase } from '../helpers/database.js';
import { uniqueEmail } from '../helpers/dashboard.js';
import { makePdf } from '../helpers/documents.js';
import { freePort } from '../helpers/processes.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';

const hasChromium = chromiumAvailable();

// The fact only the PDF holds: the widget's answer must come from the uploaded file.
const PDF_FACT = 'Our harbour rye is proofed for exactly 19 hours in the old smokehouse cellar.';

// The agent editor's Sources section in a real browser against the real server: a website (a local site of
// a few pages, one of them missing, read one page a second by its robots.txt Crawl-delay, so the progress
// shows) and a PDF dropped onto the drop zone reach "ready"; retrieval finds the PDF; the published agent's
// widget, on a page of another origin, answers from the PDF.
describe.skipIf(!hasChromium)('knowledge sources in the dashboard', () => {
  let app: FastifyInstance;
  let databaseEnv: Record<string, string>;
  let base: string;
  let browser: Browser;
  let site: TestSite;
  let hostPage: http.Server;
  let hostUrl = '';
  let agentId = '';

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `sources-${name}.png`), fullPage: true, animations: 'disabled' });
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    site = await startSite({
      robots: 'User-agent: *\nCrawl-delay: 1\n',
      pages: {
        '/': htmlPage('Lighthouse Café', 'A small café by the harbour with a view of the boats.', ['/opening-hours', '/menu', '/gone']),
        '/opening-hours': htmlPage('Opening hours', 'We are open from 8am to 5pm every day except Tuesday.', ['/']),
        '/menu': htmlPage('Menu', 'Coffee, tea, scones with clotted cream, and soup of the day.', ['/']),
      },
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const defaults = loadConfig({});
    const config = testConfig({
      publicUrl: base,
      signInLimit: { perIpAndEmail: 1000, perIp: 100_000 },
      // The local site is on 127.0.0.1, which the outbound fetch refuses unless allowed.
      sources: { ...defaults.sources, allowPrivateHosts: true },
      runtime: { ...defaults.runtime, pollIntervalMs: 100 },
    });
    databaseEnv = config.databaseEnv;
    app = await buildApp(config);
    await app.listen({ port, host: '127.0.0.1' });

    // The customer's website: another origin, one script tag.
    hostPage = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lighthouse Café</title></head>
<body><h1>Lighthouse Café</h1><p>Ask us anything in the chat.</p>
<script src="${base}/widget.js" data-chatbot-id="${agentId}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
    hostUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => hostPage?.close(resolve));
    await site?.close();
    await app?.close();
    if (databaseEnv) await dropDatabase(databaseEnv);
  });

  it('adds a website and a dropped PDF, shows their progress to ready, finds the PDF, and the widget answers from it', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));

    await page.goto(`${base}/signup`);
    await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('sources'));
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByLabel('Workspace name').fill('Lighthouse Café');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('link', { name: 'Create your first agent' }).click();
    await page.getByLabel('Agent name').fill('Café helper');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Café helper', level: 1 }).waitFor();
    agentId = page.url().split('/').pop()!;
    expect(agentId).toMatch(/^bot_/);

    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Sources' }).click();
    const sources = page.getByRole('region', { name: 'Sources', exact: true });
    await sources.getByText('No sources yet').waitFor();

    // A website: its pages are read one a second, so the progress is seen while it syncs.
    await sources.getByLabel('Website URL').fill(`${site.url}/`);
    await sources.getByLabel('Max pages (optional)').fill('10');
    await sources.getByRole('button', { name: 'Add website' }).click();
    const website = sources.getByRole('listitem', { name: '127.0.0.1' });
    const websiteProgress = website.getByRole('progressbar');
    await websiteProgress.waitFor();
    // Done against found: the crawl has found the home page's links once it has read the home page.
    await expect.poll(() => websiteProgress.getAttribute('aria-valuemax'), { timeout: 20_000 }).toMatch(/^[2-9]$/);
    expect(await website.getByText(/of \d documents found so far/).count()).toBe(1);
    // While the website syncs (the list is polled): a syncing badge, the progress's value, and its documents
    // one by one. Checked before the files below: under load the crawl may finish while they are added.
    await website.locator('.badge', { hasText: 'syncing' }).waitFor();
    expect(await websiteProgress.getAttribute('aria-valuenow')).toMatch(/^\d+$/);
    await website.getByRole('button', { name: 'Show documents of 127.0.0.1' }).click();
    await website.getByRole('table', { name: 'Documents of 127.0.0.1' }).waitFor();
    await shot(page, '01-syncing');

    // A PDF dropped onto the drop zone: a real drop event carrying a DataTransfer with the file.
    await sources.getByRole('button', { name: 'Files' }).click();
    const pdf = await makePdf([
      { heading: 'Bakery handbook', paragraphs: ['How we bake our bread.', PDF_FACT] },
      { heading: 'Deliveries', paragraphs: ['Flour arrives on Mondays from the mill up the river.'] },
    ], { title: 'Bakery handbook' });
    const dataTransfer = await page.evaluateHandle(`(() => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(pdf.toString('base64'))}), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], 'bakery-handbook.pdf', { type: 'application/pdf' }));
      return transfer;
    })()`);
    const zone = sources.getByTestId('drop-zone');
    await zone.dispatchEvent('dragenter', { dataTransfer });
    await zone.dispatchEvent('dragover', { dataTransfer });
    await shot(page, '02-drag-over');
    await zone.dispatchEvent('drop', { dataTransfer });
    const file = sources.getByRole('listitem', { name: 'bakery-handbook.pdf' });
    await file.waitFor();
    // The file input in the zone is the fallback (keyboard, screen readers).
    await sources.getByLabel('or choose files').setInputFiles({ name: 'parking.md', mimeType: 'text/markdown', buffer: Buffer.from('# Parking\n\nPark for free behind the café.\n') });
    await sources.getByRole('listitem', { name: 'parking.md' }).waitFor();

    // Both settle: ready, with their counts; the page that does not exist is the website's one failed document.
    await website.locator('.badge', { hasText: 'ready' }).first().waitFor();
    await file.locator('.badge', { hasText: 'ready' }).waitFor();
    expect(await sources.getByRole('progressbar').count()).toBe(0);
    expect(await website.textContent()).toContain('4 documents');
    expect(await website.textContent()).toContain('1 failed');
    const documents = website.getByRole('table', { name: 'Documents of 127.0.0.1' });
    await documents.getByRole('row').filter({ hasText: '/gone' }).getByText('failed').waitFor();
    expect(await documents.getByRole('row').filter({ hasText: 'Opening hours' }).textContent()).toContain('ready');
    expect(await file.textContent()).toMatch(/1 document · \d+ chunk/);
    await shot(page, '03-ready');

    // Test retrieval finds the PDF's chunk.
    await sources.getByLabel('Ask a question').fill('How long is the harbour rye proofed?');
    await sources.getByRole('button', { name: 'Search sources' }).click();
    const hits = sources.getByRole('list', { name: 'Chunks found' });
    await hits.waitFor();
    const first = hits.getByRole('listitem').first();
    expect(await first.textContent()).toContain('19 hours');
    expect(await first.textContent()).toContain('Source: bakery-handbook.pdf');
    await first.scrollIntoViewIfNeeded();
    await shot(page, '04-test-retrieval');

    // Publish, with the customer's site as an allowed origin.
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Widget' }).click();
    await page.getByLabel('Allowed origins').fill(hostUrl);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();

    // The widget on the customer's site answers a question only the PDF answers.
    const visitor = await context.newPage();
    visitor.on('pageerror', (error) => failures.push(error.message));
    await visitor.goto(`${hostUrl}/`);
    await visitor.getByRole('button', { name: 'Open chat' }).click();
    const box = visitor.getByRole('textbox', { name: 'Message' });
    await box.fill('How long do you proof the harbour rye?');
    await box.press('Enter');
    const answer = visitor.locator('chat-agent-widget .msg-assistant[data-message-id]').last();
    await answer.filter({ hasText: '19 hours' }).waitFor();
    await visitor.screenshot({ path: path.join(SCREENSHOTS, 'sources-05-widget-answer.png'), animations: 'disabled' });

    // Re-sync and delete (with its confirmation) from the list.
    await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Sources' }).click();
    await website.getByRole('button', { name: 'Re-sync 127.0.0.1' }).click();
    await website.locator('.badge', { hasText: /queued|syncing/ }).first().waitFor();
    await website.locator('.badge', { hasText: 'ready' }).first().waitFor();
    await file.getByRole('button', { name: 'Delete bakery-handbook.pdf' }).click();
    await sources.getByRole('alertdialog').getByRole('button', { name: 'Confirm delete' }).click();
    await file.waitFor({ state: 'detached' });
    await sources.getByRole('button', { name: 'Search sources' }).click();
    await expect.poll(async () => (await sources.textContent()) ?? '').not.toContain('19 hours');

    expect(failures).toEqual([]);
    await context.close();
  });
});

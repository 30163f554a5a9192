import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureBuild } from './build.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Where the browser suites save their screenshots (gitignored). */
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/** The chromium binary: CHROMIUM_PATH, or Debian's. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** True when chromium is there; under CI=true its absence is a failure, not a skip. */
export function chromiumAvailable(): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`chromium is missing at ${CHROMIUM}: the browser suites cannot run (install it, or set CHROMIUM_PATH)`);
  console.warn(`[browser tests] skipped: no chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
  return false;
}

/** Launches headless chromium with the flags that keep it quiet and offline. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Builds the dashboard into dist/web unless the last build is newer than every source (scripts/build-if-stale.mjs). */
export async function ensureWebBuild(): Promise<void> {
  await ensureBuild('web');
}

/**
 * A page of another origin (the customer's website) that embeds the widget served by `apiUrl`; the agent's id
 * is read per request, so the agent can be made once the page's origin (for its allowed_origins) is known.
 */
export async function startWidgetHostPage(apiUrl: string, chatbotId: () => string, title = 'Harbour Bakery'): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1><script src="${apiUrl}/widget.js" data-chatbot-id="${chatbotId()}" async></script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A dashboard page signed in with `cookie` (`sid=…`), and the page errors it raises. */
export async function signedInPage(browser: Browser, base: string, cookie: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(15_000);
  await context.addCookies([{ name: 'sid', value: cookie.replace(/^sid=/, ''), url: base }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  return { context, page, problems };
}

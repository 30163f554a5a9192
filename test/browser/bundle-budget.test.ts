import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ensureWebBuild } from '../helpers/browser.js';

// Issue 33 §8, budgets: what a browser downloads, gzipped, as the service serves it. The dashboard's
// first load is every script index.html loads (entry and module preloads); the widget is one file.
const KB = 1024;
const DASHBOARD_BUDGET = 150 * KB;
const WIDGET_BUDGET = 25 * KB;

describe('download budgets', () => {
  let t: TestApp;
  beforeAll(async () => {
    await ensureWebBuild();
    t = await createTestApp();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const gzipped = async (url: string) => {
    const response = await t.app.inject({ method: 'GET', url });
    expect(response.statusCode, url).toBe(200);
    return gzipSync(response.rawPayload, { level: 9 }).length;
  };

  it('the dashboard’s first load is at most 150 KB of gzipped JavaScript', async () => {
    const index = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
    const scripts = [...index.body.matchAll(/<script[^>]+src="([^"]+\.js)"|<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g)].map((m) => m[1] ?? m[2]!);
    expect(scripts.length).toBeGreaterThan(0);
    let total = 0;
    for (const script of scripts) total += await gzipped(script);
    console.info(`dashboard first load: ${scripts.length} script(s), ${(total / KB).toFixed(1)} KB gzipped (budget ${DASHBOARD_BUDGET / KB} KB)`);
    expect(total).toBeLessThanOrEqual(DASHBOARD_BUDGET);
  });

  it('widget.js is at most 25 KB gzipped', async () => {
    const size = await gzipped('/widget.js');
    console.info(`widget.js: ${(size / KB).toFixed(1)} KB gzipped (budget ${WIDGET_BUDGET / KB} KB)`);
    expect(size).toBeLessThanOrEqual(WIDGET_BUDGET);
  });
});

import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { startReceiver, verified, webhookConfig, type Receiver } from '../webhooks/support.js';

// Issue 32 in the dashboard, in Chromium: Settings → Webhooks end to end against a local receiver that
// checks signatures with the standardwebhooks package: add an endpoint (secret shown once), send a test
// event, read the delivery log, resend, disable and enable, rotate the secret, delete.

describe.runIf(chromiumAvailable())('dashboard: webhook settings', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: DashboardUser;
  let receiver: Receiver;

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `webhooks-${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    receiver = await startReceiver();
    t = await createTestApp(webhookConfig());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('adds an endpoint, sends a signed test event, resends it, disables, rotates and deletes', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    await context.addCookies([{ name: 'sid', value: owner.cookie.replace(/^sid=/, ''), url: base }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${base}/settings`);
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No endpoints yet.').waitFor();

    // Add: only lead events; the secret is shown once.
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const form = page.getByRole('form', { name: 'Add endpoint' });
    await form.getByLabel('Endpoint URL').fill(receiver.url);
    await form.getByLabel('All events, including future ones').uncheck();
    await form.getByLabel('lead.created').check();
    await form.getByLabel('Description (optional)').fill('CRM');
    await shot(page, '1-add');
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await shot(page, '2-secret');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    const endpoint = page.getByRole('article', { name: receiver.url });
    await endpoint.getByText('Events: lead.created').waitFor();

    // A test event arrives signed with that secret, and the log shows it delivered.
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    const [first] = await receiver.waitFor(1);
    expect(verified(secret, first!).type).toBe('webhook.test');
    const log = endpoint.getByRole('region', { name: `Deliveries to ${receiver.url}` });
    const row = log.locator('tbody tr').first();
    await expect.poll(async () => {
      await log.getByRole('button', { name: 'Refresh' }).click();
      return row.locator('.badge').textContent();
    }).toBe('succeeded');
    expect(await row.locator('summary').textContent()).toMatch(/^200 · \d+ ms$/);
    await shot(page, '3-delivered');

    // Resend: the same webhook-id again.
    await row.getByRole('button', { name: 'Resend webhook.test' }).click();
    const [, again] = await receiver.waitFor(2);
    expect(again!.headers['webhook-id']).toBe(first!.headers['webhook-id']);

    // Disable, then enable.
    await endpoint.getByRole('button', { name: 'Disable' }).click();
    await endpoint.locator('.badge', { hasText: 'disabled' }).waitFor();
    expect(await endpoint.getByRole('button', { name: 'Send test event' }).isDisabled()).toBe(true);
    await endpoint.getByRole('button', { name: 'Enable' }).click();
    await endpoint.locator('.badge', { hasText: 'enabled' }).waitFor();

    // Rotate: a new secret, shown once; both sign during the overlap.
    await endpoint.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('webhook-secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByText('The previous secret keeps signing beside it for 24 hours', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    const [, , third] = await receiver.waitFor(3);
    expect(verified(rotated, third!).type).toBe('webhook.test');
    expect(verified(secret, third!).type).toBe('webhook.test');
    await shot(page, '4-rotated');

    // Delete, after confirming.
    await endpoint.getByRole('button', { name: `Delete ${receiver.url}` }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page.getByText('No endpoints yet.').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});

import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp } from '../helpers/dashboard.js';

const hasChromium = chromiumAvailable();

// Settings → Account → Email notifications (issue 32, point 5): each member's choices, kept; the page says
// when this instance sends no mail (SMTP_URL unset, as here).
describe.skipIf(!hasChromium)('email notification settings in the browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    t = await createTestApp({ signInLimit: { perIpAndEmail: 1000, perIp: 100_000 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('says mail is off, and keeps a member’s choices', { timeout: 60_000 }, async () => {
    const owner = await signUp(t.app, { workspaceName: 'Quiet Bakery' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: 'sid', value: owner.cookie.replace(/^sid=/, ''), url: base }]);
    const page: Page = await context.newPage();
    await page.goto(`${base}/settings/account`);
    const section = page.getByRole('region', { name: 'Email notifications' });
    await section.getByText('Email is off on this instance').waitFor();
    const leads = section.getByLabel('Email me about new leads');
    const handoffs = section.getByLabel('Email me when a visitor asks for a person');
    expect(await leads.isChecked()).toBe(true);
    expect(await handoffs.isChecked()).toBe(true);
    await leads.click();
    await expect.poll(async () => (await owner.request('GET', '/app/api/account/notifications')).json()).toMatchObject({ notify_new_lead: false, notify_handoff: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'email-settings-mail-off.png'), fullPage: true });
    await page.reload();
    await section.getByText('Email is off on this instance').waitFor();
    expect(await section.getByLabel('Email me about new leads').isChecked()).toBe(false);
    expect(await section.getByLabel('Email me when a visitor asks for a person').isChecked()).toBe(true);
    await context.close();
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { dropDatabase } from '../helpers/database.js';
import { signUp } from '../helpers/dashboard.js';
import { freePort } from '../helpers/processes.js';
import { startSmtpCapture, type SmtpCapture } from '../mail/smtp-capture.js';

const hasChromium = chromiumAvailable();

// Password reset in a real browser (issue 32, point 5): "Forgot your password?" on the sign-in page → the
// emailed link (a real SMTP server) → a new password → signed in with it.
describe.skipIf(!hasChromium)('password reset in the browser', () => {
  let app: FastifyInstance;
  let databaseEnv: Record<string, string>;
  let base: string;
  let browser: Browser;
  let smtp: SmtpCapture;

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `password-reset-${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    smtp = await startSmtpCapture({ username: 'mailer', password: 'smtp-secret-pass' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = testConfig({
      publicUrl: base,
      signInLimit: { perIpAndEmail: 1000, perIp: 100_000 },
      mail: { url: `smtp://mailer:smtp-secret-pass@127.0.0.1:${smtp.port}`, from: 'Agents <noreply@example.test>' },
    });
    databaseEnv = config.databaseEnv;
    app = await buildApp(config);
    await app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await smtp?.close();
    if (databaseEnv) await dropDatabase(databaseEnv);
  });

  it('forgot → email → the link → a new password → signed in with it', { timeout: 90_000 }, async () => {
    const user = await signUp(app, { workspaceName: 'Reset Bakery' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(`${base}/signin`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await shot(page, '01-forgot');
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByText('an email with a link to choose a new password is on its way').waitFor();
    await shot(page, '02-sent');

    const mail = await smtp.next();
    expect(mail.to).toEqual([user.email]);
    const link = /https?:\/\/[^\s"<>]+\/reset-password\?token=[A-Za-z0-9_-]+/.exec(mail.raw)?.[0];
    expect(link, mail.raw).toBeDefined();
    await page.goto(link!);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    // The token leaves the address bar once read.
    expect(page.url()).toBe(`${base}/reset-password`);
    await page.getByLabel('New password').fill('password123');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('alert').filter({ hasText: 'most common passwords' }).waitFor();
    await page.getByLabel('New password').fill('a browser reset secret');
    await shot(page, '03-new-password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();
    await shot(page, '04-changed');

    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill('a browser reset secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome to Reset Bakery' }).waitFor();

    // The same link again: refused, with a way to ask for a new one.
    await page.goto(link!);
    await page.getByLabel('New password').fill('another browser secret');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid, expired or already used' }).waitFor();
    await shot(page, '05-used-link');
    await context.close();
  });
});

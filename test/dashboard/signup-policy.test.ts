import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, uniqueEmail } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { freePort } from '../helpers/processes.js';

const signUpRequest = (workspaceName = 'Another') => ({
  method: 'POST' as const,
  url: '/app/api/signup',
  headers: { 'content-type': 'application/json' },
  payload: JSON.stringify({ email: uniqueEmail('late'), password: 'late comer password', workspace_name: workspaceName }),
});

// Who may create an account (issue 29, point 5): SIGNUP=first-only (the default) lets the first account
// create the instance's first workspace and then only invitations; SIGNUP=open lets anyone sign up.
describe('SIGNUP policy', () => {
  const apps: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('is first-only by default; open or first-only when set; anything else is a configuration error', () => {
    expect(loadConfig({}).signup).toBe('first-only');
    expect(loadConfig({ SIGNUP: 'open' }).signup).toBe('open');
    expect(loadConfig({ SIGNUP: 'first-only' }).signup).toBe('first-only');
    expect(() => loadConfig({ SIGNUP: 'anyone' })).toThrow(ConfigError);
  });

  it('with the default, the first account creates the first workspace; later sign-ups get 403 signup_closed unless invited', async () => {
    const t = await createTestApp({ signup: loadConfig({}).signup });
    apps.push(t);
    const status = () => t.app.inject({ method: 'GET', url: '/app/api/signup-status' });
    expect((await status()).json()).toEqual({ signup: 'first-only', open: true });

    const first = await signUp(t.app, { workspaceName: 'The first' });
    expect((await status()).json()).toEqual({ signup: 'first-only', open: false });

    const closed = expectProblem(await t.app.inject(signUpRequest()), 403, 'signup_closed');
    expect(closed.detail).toMatch(/invitation/);
    expect(await t.app.database.db.selectFrom('users').select('email').execute()).toEqual([{ email: first.email.toLowerCase() }]);
    expect(await t.app.database.db.selectFrom('workspaces').select('name').execute()).toEqual([{ name: 'The first' }]);

    // An invitation still creates an account.
    const invitation = (await first.request('POST', '/app/api/invitations', { role: 'member' })).json();
    const invited = await signUp(t.app, { invitationToken: invitation.token });
    expect(invited.workspaceId).toBe(first.workspaceId);
  });

  it('SIGNUP=open lets anyone create an account and a workspace', async () => {
    const t = await createTestApp({ signup: 'open' });
    apps.push(t);
    await signUp(t.app);
    expect((await t.app.inject(signUpRequest('Second'))).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'GET', url: '/app/api/signup-status' })).json()).toEqual({ signup: 'open', open: true });
  });

  it.skipIf(!chromiumAvailable())('the sign-up page says sign-up is closed once the first account exists', { timeout: 60_000 }, async () => {
    await ensureWebBuild();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const t = await createTestApp({ signup: 'first-only', publicUrl: base });
    apps.push(t);
    await t.app.listen({ port, host: '127.0.0.1' });
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(`${base}/signup`);
      await page.getByRole('button', { name: 'Create account' }).waitFor();
      await signUp(t.app);
      await page.goto(`${base}/signup`);
      await page.getByText('Sign-up is closed on this instance').waitFor();
      expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-signup-closed.png'), fullPage: true });
    } finally {
      await browser?.close();
    }
  });
});

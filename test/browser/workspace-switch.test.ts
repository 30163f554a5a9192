import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';

// The dashboard caches API answers by path (web/src/queries.ts), and `/chatbots` is the same path in every
// workspace: App.tsx clears the cache when the user or workspace changes. Without that, the page shown right
// after switching workspace (or after signing in as someone else) drew the previous workspace's agents until
// its refetch came back. A final-state check cannot see that flash, so a MutationObserver records every node
// the page adds from the moment of the switch.

/**
 * Starts recording, in the page, every added node or changed text that contains `text`. Client-side
 * navigation keeps the recorder; a full page load would drop it, which `seenSince` reports as an error.
 * Evaluated as a string: this file is compiled without the DOM's types.
 */
async function recordAppearances(page: Page, text: string): Promise<void> {
  await page.evaluate(`(() => {
    const text = ${JSON.stringify(text)};
    window.__appearances = [];
    const note = (node) => {
      const at = (node.textContent || '').indexOf(text);
      if (at >= 0) window.__appearances.push(location.pathname + ': …' + node.textContent.slice(Math.max(0, at - 40), at + text.length + 20) + '…');
    };
    new MutationObserver((records) => {
      for (const record of records) {
        if (record.type === 'characterData') note(record.target);
        else record.addedNodes.forEach(note);
      }
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  })()`);
}

/** What the recorder saw since it started (page path and text of each appearance). */
async function seenSince(page: Page): Promise<string[]> {
  const seen = await page.evaluate<string[] | undefined>('window.__appearances');
  if (!seen) throw new Error('the recorder is gone: the page was reloaded, so the check would prove nothing');
  return seen;
}

describe.runIf(chromiumAvailable())('switching workspace or signing out never shows the previous workspace data', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let traveller: DashboardUser;
  let stranger: DashboardUser;

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `workspace-switch-${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();

    // The traveller owns Northwind and is invited into Southwind; a stranger owns Eastwind alone.
    traveller = await signUp(t.app, { workspaceName: 'Northwind' });
    const southOwner = await signUp(t.app, { workspaceName: 'Southwind' });
    stranger = await signUp(t.app, { workspaceName: 'Eastwind' });
    for (const [owner, name] of [[traveller, 'North agent'], [southOwner, 'South agent'], [stranger, 'East agent']] as const) {
      const created = await owner.request('POST', '/app/api/chatbots', { name });
      expect(created.statusCode, created.body).toBe(201);
    }
    const invitation = await southOwner.request('POST', '/app/api/invitations', { role: 'member', email: traveller.email });
    expect(invitation.statusCode, invitation.body).toBe(201);
    const accepted = await traveller.request('POST', '/app/api/invitations/accept', { token: invitation.json().token });
    expect(accepted.statusCode, accepted.body).toBe(200);
    // Accepting moved the session into Southwind: the browser starts back in Northwind.
    const back = await traveller.request('POST', '/app/api/session/workspace', { workspace_id: traveller.workspaceId });
    expect(back.statusCode, back.body).toBe(204);
  });
  afterAll(async () => {
    await browser?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('the switcher and sign-out → sign-in never draw the last workspace agents, not even for a moment', { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    context.setDefaultTimeout(15_000);
    await context.addCookies([{ name: 'sid', value: traveller.cookie.replace(/^sid=/, ''), url: base }]);
    const page = await context.newPage();
    const main = page.locator('main');

    // Northwind's home and agents list fill the cache with its answers.
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Welcome to Northwind' }).waitFor();
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await main.getByRole('link', { name: 'North agent' }).waitFor();
    await shot(page, '01-northwind-agents');

    // Switch from the agents list: the list remounts in Southwind, then the shell goes home.
    await recordAppearances(page, 'North agent');
    await page.getByLabel('Workspace').selectOption({ label: 'Southwind' });
    await page.getByRole('heading', { name: 'Welcome to Southwind' }).waitFor();
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await main.getByRole('link', { name: 'South agent' }).waitFor();
    await shot(page, '02-southwind-agents');
    // Soft, so that one run also checks the sign-out half below.
    expect.soft(await seenSince(page), 'North agent drawn after the switch').toEqual([]);
    expect(await main.getByText('North agent').count()).toBe(0);

    // Sign out and sign in as someone else: their home and agents list never show Southwind's agent.
    await recordAppearances(page, 'South agent');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email', { exact: true }).fill(stranger.email);
    await page.getByLabel('Password', { exact: true }).fill(stranger.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome to Eastwind' }).waitFor();
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await main.getByRole('link', { name: 'East agent' }).waitFor();
    await shot(page, '03-eastwind-agents');
    expect(await seenSince(page), 'South agent drawn after signing out').toEqual([]);
    expect(await main.getByText('South agent').count()).toBe(0);
    await context.close();
  });
});

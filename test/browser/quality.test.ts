import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { startConversation, widget } from '../runtime/support.js';

// Issue 33 §1, §2, §8: every dashboard page, at 1280 and 375 px, in light and dark, has no serious or
// critical axe violation, does not scroll sideways on a phone and names itself in the window title; the
// phone menu, the 404 page, the agent editor's sections and its unsaved-changes warning work.

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WIDTHS = [1280, 375] as const;
const SCHEMES = ['light', 'dark'] as const;
/** Pages screenshotted in dark mode too (all are checked in both). */
const DARK_SHOTS = new Set(['home', 'agent-widget', 'conversation', 'sign-in', 'audit-log']);

interface Visit {
  name: string;
  url: string;
  title: RegExp;
  signedIn: boolean;
}

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[] }[];
}

/** Axe's serious and critical violations on the page, as readable lines. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated as strings: this file is compiled without the DOM's types.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE);
  const violations = await page.evaluate<AxeViolation[]>("axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)");
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Waits until the page has rendered its heading and finished loading its data. */
async function settled(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor();
  await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
  await page.waitForTimeout(100);
}

describe.runIf(chromiumAvailable())('dashboard quality bars: accessibility, phones, dark mode, titles', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: DashboardUser;
  let agentId: string;
  let conversationId: string;

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    t = await createTestApp({ widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
    const created = await owner.request('POST', '/app/api/chatbots', {
      name: 'Bakery helper',
      welcome_message: 'Hello! Ask me about bread.',
      knowledge: [{ title: 'Hours', content: 'The bakery opens at 7am.' }],
      allowed_origins: ['https://www.example.com'],
    });
    agentId = created.json().id;
    expect((await owner.request('PATCH', `/app/api/chatbots/${agentId}`, { status: 'active' })).statusCode).toBe(200);
    const visitor = await startConversation(t.app, agentId, { visitor: { name: 'Ada Visitor' } });
    conversationId = visitor.conversation_id;
    const said = await widget(t.app, 'POST', `/widget/v1/conversations/${conversationId}/messages`, { token: visitor.visitor_token, body: { content: 'When do you open on Sundays?' } });
    expect(said.statusCode, said.body).toBe(201);
    const lead = await owner.request('POST', '/app/api/leads', { name: 'Grace Customer', email: 'grace@example.com', chatbot_id: agentId });
    expect(lead.statusCode, lead.body).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  async function signedInContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    await context.addCookies([{ name: 'sid', value: owner.cookie.replace(/^sid=/, ''), url: base }]);
    return context;
  }

  it('every page: no serious or critical axe violation, no sideways scrolling at 375 px, a title naming it', { timeout: 150_000 }, async () => {
    const sections = [
      ['behaviour', 'Behaviour'],
      ['sources', 'Sources'],
      ['widget', 'Widget'],
      ['lead-capture', 'Lead capture'],
      ['install', 'Install'],
    ];
    const visits: Visit[] = [
      { name: 'home', url: '/', title: /^Home · Harbour Bakery · /, signedIn: true },
      { name: 'agents', url: '/agents', title: /^Agents · Harbour Bakery/, signedIn: true },
      ...sections.map(([id, label]) => ({ name: `agent-${id}`, url: `/agents/${agentId}#${id}`, title: new RegExp(`^${label} · Bakery helper · Harbour Bakery`), signedIn: true })),
      { name: 'conversations', url: '/conversations', title: /^Conversations · Harbour Bakery/, signedIn: true },
      { name: 'conversation', url: `/conversations/${conversationId}`, title: /^Conversation · Harbour Bakery/, signedIn: true },
      { name: 'leads', url: '/leads', title: /^Leads · Harbour Bakery/, signedIn: true },
      { name: 'analytics', url: '/analytics', title: /^Analytics · Harbour Bakery/, signedIn: true },
      { name: 'settings', url: '/settings', title: /^Settings · Harbour Bakery/, signedIn: true },
      { name: 'members', url: '/settings/members', title: /^Members · Settings · Harbour Bakery/, signedIn: true },
      { name: 'developers', url: '/settings/developers', title: /^Developers · Settings · Harbour Bakery/, signedIn: true },
      { name: 'webhooks', url: '/settings/webhooks', title: /^Webhooks · Settings · Harbour Bakery/, signedIn: true },
      { name: 'audit-log', url: '/settings/audit', title: /^Audit log · Settings · Harbour Bakery/, signedIn: true },
      { name: 'account', url: '/settings/account', title: /^Account · Settings · Harbour Bakery/, signedIn: true },
      { name: 'provider', url: '/settings/provider', title: /^Model provider · Settings · Harbour Bakery/, signedIn: true },
      { name: 'not-found', url: '/no/such/page', title: /^Page not found · Harbour Bakery/, signedIn: true },
      { name: 'sign-in', url: '/signin', title: /^Sign in · Chat agents$/, signedIn: false },
      { name: 'sign-up', url: '/signup', title: /^Create account · Chat agents$/, signedIn: false },
      { name: 'forgot-password', url: '/forgot-password', title: /^Forgot password · Chat agents$/, signedIn: false },
    ];
    const signedIn = await (await signedInContext()).newPage();
    const signedOut = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    for (const visit of visits) {
      const page = visit.signedIn ? signedIn : signedOut;
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${base}${visit.url}`);
      await settled(page);
      expect(await page.title(), visit.name).toMatch(visit.title);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: width === 375 ? 740 : 900 });
        for (const scheme of SCHEMES) {
          await page.emulateMedia({ colorScheme: scheme });
          for (const line of await axeViolations(page)) problems.push(`${visit.name} ${width}px ${scheme}: ${line}`);
          if (width === 375) {
            const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
            if (scrollWidth > innerWidth) problems.push(`${visit.name} ${width}px ${scheme}: the page is ${scrollWidth}px wide`);
          }
          if (scheme === 'light' || DARK_SHOTS.has(visit.name)) await page.screenshot({ path: path.join(SCREENSHOTS, `quality-${visit.name}-${width}-${scheme}.png`), fullPage: true });
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('on a phone the navigation hides behind a menu button that says whether it is open', { timeout: 30_000 }, async () => {
    const context = await signedInContext();
    const page = await context.newPage();
    await page.setViewportSize({ width: 375, height: 740 });
    await page.goto(`${base}/`);
    await settled(page);
    const menu = page.getByRole('button', { name: 'Menu' });
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    // Escape closes it again and gives the focus back to the button.
    await nav.getByRole('link', { name: 'Leads' }).focus();
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate<boolean>("document.activeElement?.getAttribute('aria-controls') === 'sidebar-menu'")).toBe(true);
    await menu.click();
    await nav.getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    // On a laptop there is no menu button: the sidebar is always there.
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(await menu.isVisible()).toBe(false);
    expect(await nav.isVisible()).toBe(true);
    await context.close();
  });

  it('an unknown dashboard address renders the app’s 404 page; unknown API addresses keep their JSON 404', async () => {
    const page = await fetch(`${base}/no/such/page`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<div id="root">');
    for (const url of ['/api/v1/nope', '/app/api/nope']) {
      const api = await fetch(`${base}${url}`, { headers: { accept: 'text/html,application/json' } });
      expect(api.status, url).toBe(404);
      expect(api.headers.get('content-type'), url).toContain('application/problem+json');
    }
    const post = await fetch(`${base}/no/such/page`, { method: 'POST', headers: { accept: 'text/html' } });
    expect(post.status).toBe(404);
    expect(post.headers.get('content-type')).toContain('application/problem+json');
  });

  it('the agent editor: sections by address, a live widget preview, and a warning before losing unsaved changes', { timeout: 45_000 }, async () => {
    const context = await signedInContext();
    const page = await context.newPage();
    await page.goto(`${base}/agents/${agentId}`);
    await settled(page);
    const sections = page.getByRole('navigation', { name: 'Agent sections' });
    expect(await sections.getByRole('link', { name: 'Behaviour' }).getAttribute('aria-current')).toBe('page');
    await sections.getByRole('link', { name: 'Widget' }).click();
    await page.waitForURL(`${base}/agents/${agentId}#widget`);
    expect(await page.title()).toMatch(/^Widget · Bakery helper · /);

    // The preview follows the form before anything is saved.
    const preview = page.getByRole('figure', { name: 'Widget preview' });
    await preview.getByText('Hello! Ask me about bread.').waitFor();
    await page.getByLabel('Welcome message').fill('Good morning! Fresh loaves at 7.');
    await page.getByLabel('Suggested questions').fill('When do you open?\nDo you deliver?');
    await preview.getByText('Good morning! Fresh loaves at 7.').waitFor();
    await preview.getByText('Do you deliver?').waitFor();
    // The appearance fields (AgentAppearance) drive the same preview: a labelled launcher on the left.
    await page.getByLabel('Launcher label').fill('Ask the baker');
    await preview.getByText('Ask the baker').waitFor();
    await page.getByLabel('Bottom left').check();
    expect(await preview.getAttribute('class')).toContain('left');
    await page.getByRole('navigation', { name: 'Agent sections' }).getByText('Unsaved changes').waitFor();

    // Leaving through the dashboard's navigation asks first; refusing keeps the page and the edits.
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).click();
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toContain('unsaved changes');
    expect(page.url()).toBe(`${base}/agents/${agentId}#widget`);
    expect(await page.getByLabel('Welcome message').inputValue()).toBe('Good morning! Fresh loaves at 7.');

    // Switching sections keeps the draft; reloading asks the browser's own question (beforeunload).
    await sections.getByRole('link', { name: 'Behaviour' }).click();
    await sections.getByRole('link', { name: 'Widget' }).click();
    expect(await page.getByLabel('Welcome message').inputValue()).toBe('Good morning! Fresh loaves at 7.');
    page.once('dialog', (dialog) => {
      asked.push(dialog.type());
      void dialog.dismiss();
    });
    await page.reload({ timeout: 2_000 }).catch(() => undefined);
    await expect.poll(() => asked.length).toBe(2);
    expect(asked[1]).toBe('beforeunload');

    // Saved, nothing is pending: the navigation moves without asking.
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    const saved = (await owner.request('GET', `/app/api/chatbots/${agentId}`)).json();
    expect(saved.welcome_message).toBe('Good morning! Fresh loaves at 7.');
    expect(saved.suggested_questions).toEqual(['When do you open?', 'Do you deliver?']);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor();
    expect(asked).toHaveLength(2);
    await context.close();
  });
});

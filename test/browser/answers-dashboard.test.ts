import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { startConversation, widget } from '../runtime/support.js';

// Issue 31 in the dashboard, in Chromium against the real server: visitors ask a builtin agent (one text
// source) through the widget API, one question twice that it cannot answer, one it can, rate an answer down
// and ask for a person; then the owner finds the waiting conversation, reads the answer figures, and turns
// the unanswered question into a Q&A source in one step, after which the agent answers it.

const UNKNOWN = 'Is there parking for bicycles?';
const ANSWER = 'Yes: there are bicycle racks by the front door.';

describe.runIf(chromiumAvailable())('dashboard: waiting conversations, answer figures, unanswered questions → Q&A', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: DashboardUser;
  let botId: string;
  let waitingId: string;
  let ratedId: string;

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `answers-dashboard-${name}.png`), fullPage: true });
  }

  /** A visitor's question through the widget API; the agent's answer. */
  async function ask(conversation: { conversation_id: string; visitor_token: string }, content: string): Promise<{ id: string; content: string }> {
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${conversation.conversation_id}/messages`, { token: conversation.visitor_token, body: { content } });
    expect(response.statusCode, response.body).toBe(201);
    return (response.json() as { reply: { id: string; content: string } }).reply;
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ensureWebBuild();
    t = await createTestApp({ widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();

    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
    botId = (await owner.request('POST', '/app/api/chatbots', { name: 'Bakery helper', instructions: 'Answer visitors of the bakery briefly.' })).json().id;
    const text = await owner.request('POST', `/app/api/chatbots/${botId}/sources`, {
      type: 'text',
      title: 'Opening hours',
      content: 'The bakery is open from 7am to 6pm, Monday to Saturday. Sourdough bread is baked every morning.',
    });
    expect(text.statusCode, text.body).toBe(201);
    const published = await owner.request('PATCH', `/app/api/chatbots/${botId}`, { status: 'active' });
    expect(published.statusCode, published.body).toBe(200);
    // A second agent without traffic, to check the per-agent figures.
    expect((await owner.request('POST', '/app/api/chatbots', { name: 'Quiet helper' })).statusCode).toBe(201);

    const first = await startConversation(t.app, botId);
    await ask(first, UNKNOWN);
    const answered = await ask(first, 'When is the bakery open?');
    expect(answered.content).toContain('7am');
    const rated = await widget(t.app, 'POST', `/widget/v1/conversations/${first.conversation_id}/messages/${answered.id}/feedback`, { token: first.visitor_token, body: { rating: 'down' } });
    expect(rated.statusCode, rated.body).toBe(200);
    const second = await startConversation(t.app, botId);
    await ask(second, UNKNOWN.toLowerCase());
    const handoff = await widget(t.app, 'POST', `/widget/v1/conversations/${second.conversation_id}/handoff`, { token: second.visitor_token });
    expect(handoff.statusCode, handoff.body).toBe(200);
    waitingId = second.conversation_id;
    ratedId = first.conversation_id;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('filters the waiting conversation with its badge, shows the figures, and adds a Q&A from an unanswered question', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: 'sid', value: owner.cookie.replace(/^sid=/, ''), url: base }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));

    // Conversations: two rows, one waiting; the filter leaves that one.
    await page.goto(`${base}/conversations`);
    const rows = page.locator('table tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const badges = page.getByRole('img', { name: /^Waiting for a person since / });
    await expect.poll(() => badges.count()).toBe(1);
    await page.getByRole('checkbox', { name: 'Waiting for a person' }).check();
    await expect.poll(() => rows.count()).toBe(1);
    await rows.first().getByRole('img', { name: /^Waiting for a person since / }).waitFor();
    await shot(page, '01-conversations-waiting');
    await rows.first().getByRole('link').click();
    await page.waitForURL(`${base}/conversations/${waitingId}`);
    await page.getByRole('img', { name: /^Waiting for a person since / }).waitFor();
    await shot(page, '02-conversation-waiting');

    // The rated conversation: the agent's answer shows its source and the visitor's rating.
    await page.goto(`${base}/conversations/${ratedId}`);
    const answer = page.getByRole('list', { name: 'Transcript' }).getByRole('listitem').filter({ hasText: '7am' });
    await answer.getByText('Sources: Opening hours').waitFor();
    await answer.getByText('Rated unhelpful by the visitor').waitFor();
    await shot(page, '02b-conversation-rated');

    // Analytics: the answer figures for the period, then per agent.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
    const figures = page.getByRole('definition');
    const figure = async (name: string) => (await page.locator('.totals .card').filter({ has: page.getByRole('term').getByText(name, { exact: true }) }).getByRole('definition').textContent())?.trim();
    await expect.poll(() => figures.count()).toBeGreaterThan(5);
    await expect.poll(() => figure('Answered')).toBe('1');
    expect(await figure('Unanswered')).toBe('2');
    expect(await figure('Answer rate')).toBe('33%');
    expect(await figure('Rated helpful')).toBe('0');
    expect(await figure('Rated unhelpful')).toBe('1');
    expect(await figure('Asked for a person')).toBe('1');
    const unanswered = page.getByRole('table', { name: 'Unanswered questions' });
    const question = unanswered.getByRole('row').filter({ hasText: UNKNOWN.toLowerCase() });
    await question.waitFor();
    expect(await unanswered.locator('tbody tr').count()).toBe(1);
    expect((await question.getByRole('cell').allTextContents()).slice(1, 2)).toEqual(['2']);
    expect(await question.getByRole('cell').nth(3).textContent()).toBe('Bakery helper');
    await shot(page, '03-analytics');

    const agent = page.getByRole('combobox', { name: 'Agent' });
    await agent.selectOption({ label: 'Quiet helper' });
    await expect.poll(() => figure('Answer rate')).toBe('—');
    expect(await figure('Unanswered')).toBe('0');
    await page.getByText('No unanswered questions in this period.').waitFor();
    await agent.selectOption({ label: 'Bakery helper' });
    await expect.poll(() => figure('Asked for a person')).toBe('1');

    // "Add as Q&A": the question prefilled, an answer written, the row says it was added.
    await question.getByRole('button', { name: /^Add as Q&A/ }).click();
    const form = page.getByRole('form', { name: 'Add a question and answer' });
    expect(await form.getByLabel('Question').inputValue()).toBe(UNKNOWN.toLowerCase());
    await form.getByLabel('Question').fill(UNKNOWN);
    await form.getByLabel('Answer').fill(ANSWER);
    await shot(page, '04-add-as-qa');
    await form.getByRole('button', { name: 'Add Q&A' }).click();
    await question.getByRole('status').filter({ hasText: 'Added as Q&A' }).waitFor();
    expect(await form.count()).toBe(0);
    await shot(page, '05-added');
    expect(problems).toEqual([]);
    await context.close();

    // The source exists (through the API), and the agent now answers the question with it.
    const sources = (await owner.request('GET', `/app/api/chatbots/${botId}/sources`)).json() as { data: { type: string; title: string | null; status: string }[] };
    expect(sources.data.filter((s) => s.type === 'qa')).toEqual([expect.objectContaining({ title: UNKNOWN, status: 'ready' })]);
    const again = await ask(await startConversation(t.app, botId), UNKNOWN);
    expect(again.content).toContain('bicycle racks by the front door');
  });
});

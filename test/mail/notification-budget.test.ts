import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrations } from '../../src/db/migrations/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock, type TestClock } from '../helpers/clock.js';
import { openMigrationScratch } from '../helpers/database.js';
import { signUp, uniqueEmail, type DashboardUser } from '../helpers/dashboard.js';
import { startConversation, widget } from '../runtime/support.js';
import { startSmtpCapture, type CapturedMail, type SmtpCapture } from './smtp-capture.js';

const PUBLIC_URL = 'https://chat.example.test';
const LIMITS = { signInLimit: { perIpAndEmail: 1000, perIp: 100_000 }, widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } };
const PER_HOUR = 5;
const MINUTE = 60_000;

/** A message's Subject header, unfolded. */
function subjectOf(mail: CapturedMail): string {
  const headers = mail.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n(?=[ \t])/g, '');
  const match = /^Subject: (.*)$/m.exec(headers);
  if (!match) throw new Error(`no subject in:\n${mail.raw}`);
  return match[1]!;
}

/** The HTML part of a message (what follows its text/html Content-Type). */
function htmlPartOf(mail: CapturedMail): string {
  const start = mail.raw.indexOf('Content-Type: text/html');
  if (start < 0) throw new Error(`no HTML part in:\n${mail.raw}`);
  return mail.raw.slice(start);
}

/** The mail_jobs of a workspace, oldest first. */
function mailRows(t: TestApp, workspaceId: string) {
  return t.app.database.db
    .selectFrom('mail_jobs')
    .select(['id', 'kind', 'state', 'recipient', 'subject', 'text_body', 'digest_id', 'run_after', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Waits until `count` messages have arrived, then a little longer, and checks that no more came. */
async function exactlyArrived(smtp: SmtpCapture, count: number): Promise<CapturedMail[]> {
  await vi.waitFor(() => expect(smtp.messages.length).toBeGreaterThanOrEqual(count), { timeout: 20_000, interval: 100 });
  // The runner polls every 400 ms: a mail beyond the budget would show within a few polls.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(smtp.messages).toHaveLength(count);
  return [...smtp.messages];
}

/** The app with mail through `smtp` and a budget of PER_HOUR notification emails an hour, on `clock`. */
function mailApp(smtp: SmtpCapture, clock: TestClock): Promise<TestApp> {
  const mail = { url: `smtp://mailer:smtp-secret-pass@127.0.0.1:${smtp.port}`, from: 'noreply@example.test' };
  return createTestApp({ ...LIMITS, publicUrl: PUBLIC_URL, notifications: { mailPerHour: PER_HOUR }, mail }, { clock });
}

async function activeAgent(owner: DashboardUser, name: string): Promise<string> {
  const created = await owner.request('POST', '/app/api/chatbots', { name, knowledge: [{ title: 'Hours', content: 'The bakery opens at 7am.' }] });
  expect(created.statusCode, created.body).toBe(201);
  const botId = (created.json() as { id: string }).id;
  expect((await owner.request('PATCH', `/app/api/chatbots/${botId}`, { status: 'active' })).statusCode).toBe(200);
  return botId;
}

// Mail that visitors cause is bounded per workspace and hour (MAIL_NOTIFY_PER_HOUR), the rest summed up in one
// digest per recipient; visitor text never reaches a subject line. Through a real SMTP server.
describe('a flood of visitor leads', () => {
  let smtp: SmtpCapture;
  let clock: TestClock;
  let t: TestApp;
  let owner: DashboardUser;
  let botId: string;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    clock = testClock();
    t = await mailApp(smtp, clock);
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
    botId = await activeAgent(owner, 'Bakery helper');
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('sends the budget one by one, then one digest when the hour allows; a password reset and an invitation still go out', async () => {
    const invitee = uniqueEmail('invited');
    for (let i = 1; i <= 15; i++) {
      const visitor = await startConversation(t.app, botId);
      const name = i === 1 ? '<a href="http://evil.test">Spam 1</a> - visit http://evil.test' : `Spam ${i} - visit http://evil.test`;
      const lead = await widget(t.app, 'POST', `/widget/v1/conversations/${visitor.conversation_id}/lead`, { token: visitor.visitor_token, body: { name, email: `spam${i}@evil.test` } });
      expect(lead.statusCode, lead.body).toBe(201);
      const handoff = await widget(t.app, 'POST', `/widget/v1/conversations/${visitor.conversation_id}/handoff`, { token: visitor.visitor_token });
      expect(handoff.statusCode, handoff.body).toBe(200);
      if (i === 8) {
        // In the middle of the flood: neither counted nor held back.
        const forgot = await t.app.inject({ method: 'POST', url: '/app/api/password/forgot', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: owner.email }) });
        expect(forgot.statusCode, forgot.body).toBe(202);
        expect((await owner.request('POST', '/app/api/invitations', { role: 'member', email: invitee })).statusCode).toBe(201);
      }
    }

    // 5 notifications + the reset to the owner, the invitation to the invitee: nothing else.
    const arrived = await exactlyArrived(smtp, PER_HOUR + 2);
    const toOwner = arrived.filter((mail) => mail.to.includes(owner.email));
    expect(toOwner.map(subjectOf).sort()).toEqual([
      'A visitor asks for a person: Bakery helper',
      'A visitor asks for a person: Bakery helper',
      'New lead from Bakery helper',
      'New lead from Bakery helper',
      'New lead from Bakery helper',
      'Reset your password',
    ]);
    expect(arrived.filter((mail) => mail.to.includes(invitee)).map(subjectOf)).toEqual(['Join Harbour Bakery']);

    // The visitor's text is in the body only: as typed in the plain text, escaped in the HTML, never a link.
    const first = toOwner.find((mail) => mail.raw.includes('Spam 1<'))!;
    const html = htmlPartOf(first);
    expect(first.raw.slice(0, first.raw.indexOf('Content-Type: text/html'))).toContain('Name: <a href="http://evil.test">Spam 1</a> - visit http://evil.test\r\nEmail: spam1@evil.test');
    expect(html).toContain('Name: &lt;a href=&quot;http://evil.test&quot;&gt;Spam 1&lt;/a&gt; - visit http://evil.test<br>Email: spam1@evil.test');
    expect(html.match(/<a /g)).toEqual(['<a ']);
    expect(html).toContain(`<a href="${PUBLIC_URL}/leads"`);

    // The rest is held for one digest, due when the oldest of the five leaves the hour.
    const rows = await mailRows(t, owner.workspaceId);
    const notifications = rows.filter((row) => row.kind === 'new_lead' || row.kind === 'handoff');
    expect(notifications).toHaveLength(30);
    expect(notifications.filter((row) => row.state === 'sent')).toHaveLength(PER_HOUR);
    const held = notifications.filter((row) => row.state === 'held');
    expect(held).toHaveLength(25);
    const digests = rows.filter((row) => row.kind === 'digest');
    expect(digests).toHaveLength(1);
    expect(digests[0]).toMatchObject({ state: 'pending', recipient: owner.email });
    expect(held.every((row) => row.digest_id === digests[0]!.id)).toBe(true);
    const oldestSent = notifications.find((row) => row.state === 'sent')!;
    expect(Date.parse(digests[0]!.run_after)).toBe(Date.parse(oldestSent.created_at) + 60 * MINUTE);

    // An hour on, the digest goes out, once: counts and the dashboard, no visitor text.
    clock.advance(61 * MINUTE);
    const [digest] = (await exactlyArrived(smtp, PER_HOUR + 3)).slice(PER_HOUR + 2);
    expect(digest!.to).toEqual([owner.email]);
    expect(subjectOf(digest!)).toBe('12 more new leads and 13 more requests for a person in Harbour Bakery');
    expect(digest!.raw).toContain(`12 more new leads and 13 more requests for a person in Harbour Bakery since ${held[0]!.created_at.slice(0, 16).replace('T', ' ')} UTC: see the dashboard.`);
    expect(digest!.raw).toContain(`<a href="${PUBLIC_URL}/"`);
    expect(digest!.raw).not.toMatch(/Spam|evil/);
    expect(toOwner.concat(digest!).map(subjectOf).join('\n')).not.toMatch(/Spam|evil|@/);
  });
});

// The budget's window rolls, and a recipient gets at most one digest per window, on a pinned clock.
describe('the notification budget over time', () => {
  const T0 = Date.parse('2031-03-03T10:00:00.000Z');
  let smtp: SmtpCapture;
  let clock: TestClock;
  let t: TestApp;
  let owner: DashboardUser;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    clock = testClock(T0 - 60 * MINUTE);
    t = await mailApp(smtp, clock);
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  // The clock moves only once no email is being sent: a jump past a send's lease would have it sent again
  // (the queue is at least once), which is not what these tests are about.
  const leadAt = async (at: number, name: string) => {
    await vi.waitFor(async () => {
      const busy = await t.app.database.db
        .selectFrom('mail_jobs')
        .select('id')
        .where((eb) => eb.or([eb('state', '=', 'running'), eb.and([eb('state', '=', 'pending'), eb('run_after', '<=', clock.now().toISOString())])]))
        .execute();
      expect(busy).toEqual([]);
    }, { timeout: 20_000, interval: 50 });
    clock.set(at);
    const created = await owner.request('POST', '/app/api/leads', { name, email: 'lead@example.com' });
    expect(created.statusCode, created.body).toBe(201);
  };
  const digests = async () => (await mailRows(t, owner.workspaceId)).filter((row) => row.kind === 'digest');
  const iso = (ms: number) => new Date(ms).toISOString();

  it('frees one mail as each of the hour\'s oldest leaves it, and spaces digests an hour apart', async () => {
    // Five mails over the hour before T0 spend the budget.
    for (const minutes of [50, 40, 30, 20, 10]) await leadAt(T0 - minutes * MINUTE, `Early ${minutes}`);
    await exactlyArrived(smtp, 5);
    expect(smtp.messages.map(subjectOf)).toEqual(Array(5).fill('New lead in Harbour Bakery'));

    // At T0 a sixth is held: its digest is due when the mail of T0-50 leaves the hour; a seventh joins it.
    await leadAt(T0, 'Held 1');
    expect(await digests()).toMatchObject([{ state: 'pending', run_after: iso(T0 + 10 * MINUTE), subject: '1 more new lead in Harbour Bakery' }]);
    await leadAt(T0 + 5 * MINUTE, 'Held 2');
    expect(await digests()).toMatchObject([{ state: 'pending', run_after: iso(T0 + 10 * MINUTE), subject: '2 more new leads in Harbour Bakery' }]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(smtp.messages).toHaveLength(5);

    clock.set(T0 + 10 * MINUTE);
    const [digest] = (await exactlyArrived(smtp, 6)).slice(5);
    expect(subjectOf(digest!)).toBe('2 more new leads in Harbour Bakery');
    expect(digest!.raw).toContain('since 2031-03-03 10:00 UTC');

    // One mail of the hour has left it: one more goes by itself; the next is held for a second digest,
    // which waits an hour after the first although the window would allow another mail at T0+20.
    await leadAt(T0 + 11 * MINUTE, 'Alone');
    await exactlyArrived(smtp, 7);
    await leadAt(T0 + 12 * MINUTE, 'Held 3');
    const [, second] = await digests();
    expect(second).toMatchObject({ state: 'pending', run_after: iso(T0 + 70 * MINUTE), subject: '1 more new lead in Harbour Bakery' });
    clock.set(T0 + 30 * MINUTE);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(smtp.messages).toHaveLength(7);
    clock.set(T0 + 70 * MINUTE);
    expect(subjectOf((await exactlyArrived(smtp, 8))[7]!)).toBe('1 more new lead in Harbour Bakery');
  });

  it('keeps a member\'s preferences: one who wants no lead emails gets neither mails nor digests', async () => {
    await owner.request('PATCH', '/app/api/account/notifications', { notify_new_lead: false });
    const before = (await mailRows(t, owner.workspaceId)).length;
    await leadAt(T0 + 80 * MINUTE, 'Unwanted');
    expect(await mailRows(t, owner.workspaceId)).toHaveLength(before);
  });
});

describe('the mail budget migration', () => {
  it('names the kind of the emails queued before it, and goes down and up again', async () => {
    const scratch = await openMigrationScratch();
    try {
      const names = Object.keys(migrations);
      await scratch.migrateTo(names[names.indexOf('0026_mail_budget') - 1]!);
      const at = '2031-01-01T00:00:00.000Z';
      const legacy = (dedupeKey: string) => ({
        id: `mail_${dedupeKey.replace(/\W/g, '')}`, workspace_id: 'ws_1', dedupe_key: dedupeKey, recipient: 'owner@example.test', subject: 's', text_body: 't', html_body: 'h',
        state: 'sent', attempts: 1, run_after: at, locked_until: null, last_error: null, created_at: at, updated_at: at,
      });
      const db = scratch.handle.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await db.insertInto('mail_jobs').values(['lead:l1:u1', 'handoff:c1:t:u1', 'invitation:i1'].map(legacy)).execute();

      expect(await scratch.migrateToLatest()).toContain('0026_mail_budget');
      const rows = await scratch.handle.db.selectFrom('mail_jobs').select(['dedupe_key', 'kind', 'digest_id']).orderBy('dedupe_key').execute();
      expect(rows).toEqual([
        { dedupe_key: 'handoff:c1:t:u1', kind: 'handoff', digest_id: null },
        { dedupe_key: 'invitation:i1', kind: 'invitation', digest_id: null },
        { dedupe_key: 'lead:l1:u1', kind: 'new_lead', digest_id: null },
      ]);
    } finally {
      await scratch.remove();
    }
  });
});

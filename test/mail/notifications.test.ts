import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, uniqueEmail, type DashboardUser } from '../helpers/dashboard.js';
import { startConversation, widget } from '../runtime/support.js';
import { startSmtpCapture, type CapturedMail, type SmtpCapture } from './smtp-capture.js';

const PUBLIC_URL = 'https://chat.example.test';
const LIMITS = { signInLimit: { perIpAndEmail: 1000, perIp: 100_000 }, widget: { ratePerIpPerMinute: 10_000, messagesPerConversationPerMinute: 100 } };

/** Mail jobs queued under a dedupe key prefix, with where each goes. */
async function jobs(t: TestApp, prefix: string) {
  return t.app.database.db.selectFrom('mail_jobs').select(['recipient', 'state', 'dedupe_key']).where('dedupe_key', 'like', `${prefix}%`).orderBy('recipient').execute();
}

// Email notifications (issue 32, point 5): invitations, new leads and requests for a person, per member's
// preferences, queued with the event and sent by the job runner through a real SMTP server.
describe('email notifications', () => {
  let smtp: SmtpCapture;
  let t: TestApp;
  let owner: DashboardUser;
  let member: DashboardUser;
  let botId: string;
  // Mails arrive in any order (two senders): each test takes those for its own recipients.
  const inbox = async (count: number, filter: (mail: CapturedMail) => boolean): Promise<CapturedMail[]> => {
    const found: CapturedMail[] = [];
    while (found.length < count) {
      const mail = await smtp.next();
      if (filter(mail)) found.push(mail);
    }
    return found;
  };

  beforeAll(async () => {
    smtp = await startSmtpCapture({ username: 'mailer', password: 'smtp-secret-pass' });
    t = await createTestApp({ ...LIMITS, publicUrl: PUBLIC_URL, mail: { url: `smtp://mailer:smtp-secret-pass@127.0.0.1:${smtp.port}`, from: 'Agents <noreply@example.test>' } });
    owner = await signUp(t.app, { workspaceName: 'Harbour Bakery' });
    botId = (await owner.request('POST', '/app/api/chatbots', { name: 'Bakery helper', knowledge: [{ title: 'Hours', content: 'The bakery opens at 7am.' }] })).json().id;
    expect((await owner.request('PATCH', `/app/api/chatbots/${botId}`, { status: 'active' })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('an invitation for an email is emailed with its link (the dashboard still shows it)', async () => {
    const email = uniqueEmail('invited');
    const created = await owner.request('POST', '/app/api/invitations', { role: 'member', email });
    expect(created.statusCode, created.body).toBe(201);
    const { token } = created.json() as { token: string };
    const [mail] = await inbox(1, (m) => m.to.includes(email));
    expect(mail!.raw).toContain('Subject: Join Harbour Bakery');
    expect(mail!.raw).toContain(`${PUBLIC_URL}/invite#${token}`);
    member = await signUp(t.app, { email, invitationToken: token });
    // A link without an email is only shown.
    expect((await owner.request('POST', '/app/api/invitations', { role: 'member' })).statusCode).toBe(201);
    expect(await jobs(t, 'invitation:')).toHaveLength(1);
  });

  it('each member chooses: new leads and requests for a person go to those who want them', async () => {
    const initial = await member.request('GET', '/app/api/account/notifications');
    expect(initial.json()).toEqual({ notify_new_lead: true, notify_handoff: true, mail_enabled: true });
    const changed = await member.request('PATCH', '/app/api/account/notifications', { notify_new_lead: false });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toEqual({ notify_new_lead: false, notify_handoff: true, mail_enabled: true });
    expect((await member.request('GET', '/app/api/account/notifications')).json()).toMatchObject({ notify_new_lead: false });
    const audited = (await t.app.services.audit.list(owner.workspaceId, 1000)).filter((e) => e.action === 'member.notifications_changed');
    expect(audited).toHaveLength(1);

    // A new lead: the owner only.
    const lead = (await owner.request('POST', '/app/api/leads', { name: 'Bea Baker', email: 'bea@example.com' })).json() as { id: string };
    const [leadMail] = await inbox(1, (m) => m.raw.includes('Subject: New lead'));
    expect(leadMail!.to).toEqual([owner.email]);
    expect(leadMail!.raw).toContain('Bea Baker');
    expect((await jobs(t, `lead:${lead.id}:`)).map((j) => j.recipient)).toEqual([owner.email]);

    // A visitor asks for a person: both, once, however many updates follow.
    const visitor = await startConversation(t.app, botId, { visitor: { name: 'Ada Visitor' } });
    expect((await widget(t.app, 'POST', `/widget/v1/conversations/${visitor.conversation_id}/handoff`, { token: visitor.visitor_token })).statusCode).toBe(200);
    const handoffs = await inbox(2, (m) => m.raw.includes('Subject: A visitor asks for a person'));
    expect(handoffs.flatMap((m) => m.to).sort()).toEqual([owner.email, member.email].sort());
    expect(handoffs[0]!.raw).toContain(`${PUBLIC_URL}/conversations/${visitor.conversation_id}`);
    // An operator answers, then closes: more conversation.updated events that carry the same request.
    const answered = await owner.request('POST', `/app/api/conversations/${visitor.conversation_id}/messages`, { content: 'Hello, I am here.' });
    expect(answered.statusCode, answered.body).toBeLessThan(300);
    const closed = await owner.request('POST', `/app/api/conversations/${visitor.conversation_id}/close`);
    expect(closed.statusCode, closed.body).toBe(200);
    const queued = await jobs(t, `handoff:${visitor.conversation_id}:`);
    expect(queued.map((j) => j.recipient).sort()).toEqual([owner.email, member.email].sort());
  });
});

describe('email notifications with mail off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(LIMITS);
  });
  afterAll(async () => t?.close());

  it('queues nothing, and the dashboard is told mail is off', async () => {
    const owner = await signUp(t.app);
    expect((await owner.request('GET', '/app/api/account/notifications')).json()).toEqual({ notify_new_lead: true, notify_handoff: true, mail_enabled: false });
    expect((await owner.request('POST', '/app/api/invitations', { role: 'member', email: uniqueEmail() })).statusCode).toBe(201);
    expect((await owner.request('POST', '/app/api/leads', { name: 'Bea', email: 'bea@example.com' })).statusCode).toBe(201);
    expect(await jobs(t, '')).toEqual([]);
  });
});

describe('an email the SMTP server refuses', () => {
  let smtp: SmtpCapture;
  let t: TestApp;
  beforeAll(async () => {
    smtp = await startSmtpCapture({ username: 'mailer', password: 'the right password' });
    t = await createTestApp({ ...LIMITS, mail: { url: `smtp://mailer:a-wrong-password@127.0.0.1:${smtp.port}`, from: 'noreply@example.test' } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('stays queued with the error, for a later retry', async () => {
    const owner = await signUp(t.app);
    const lead = (await owner.request('POST', '/app/api/leads', { name: 'Bea', email: 'bea@example.com' })).json() as { id: string };
    const key = `lead:${lead.id}:`;
    const row = () => t.app.database.db.selectFrom('mail_jobs').select(['state', 'attempts', 'last_error', 'run_after', 'created_at']).where('dedupe_key', 'like', `${key}%`).executeTakeFirst();
    await vi.waitFor(async () => expect((await row())?.last_error).toBeTruthy(), { timeout: 15_000 });
    const failed = (await row())!;
    expect(failed).toMatchObject({ state: 'pending', attempts: 1 });
    expect(failed.last_error).not.toContain('a-wrong-password');
    expect(failed.run_after > failed.created_at).toBe(true);
    expect(smtp.messages).toEqual([]);
  });
});

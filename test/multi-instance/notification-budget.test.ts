import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliJson, startServer, type ServerProcess } from '../helpers/processes.js';
import { startSmtpCapture, type SmtpCapture } from '../mail/smtp-capture.js';

// The notification mail budget (MAIL_NOTIFY_PER_HOUR) is counted in the database: visitors spread over two
// server processes on one PostgreSQL schema, all at once, still get the workspace's owner at most the
// budget's mails and one digest. PostgreSQL + Redis tier only.

const PER_HOUR = 5;
const VISITORS = 15;

describe('the notification budget across instances', () => {
  let env: Record<string, string>;
  let smtp: SmtpCapture;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL');
    env = freshDatabaseEnv();
    smtp = await startSmtpCapture();
    await cli(env, 'migrate');
    const mail = { SMTP_URL: `smtp://mailer:smtp-secret-pass@127.0.0.1:${smtp.port}`, MAIL_FROM: 'noreply@example.test', MAIL_NOTIFY_PER_HOUR: String(PER_HOUR), WIDGET_RATE_PER_IP_PER_MINUTE: '10000' };
    [a, b] = await Promise.all([startServer({ ...env, ...mail }), startServer({ ...env, ...mail })]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await smtp?.close();
    await dropDatabase(env);
  });

  it('15 visitors with a lead and a request for a person each, on both instances at once: 5 mails, the rest held for one digest', { timeout: 90_000 }, async () => {
    const signup = await fetch(`${a.url}/app/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: a.url },
      body: JSON.stringify({ email: 'owner@example.test', password: 'correct horse battery', workspace_name: 'Harbour Bakery' }),
    });
    expect(signup.status, await signup.clone().text()).toBe(201);
    const { workspace_id: workspaceId } = (await signup.json()) as { workspace_id: string };
    const { key } = await cliJson<{ key: string }>(env, 'key', 'create', '--workspace', workspaceId, '--scopes', 'all');
    const api = (method: string, path: string, body: unknown) =>
      fetch(`${a.url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bot = (await (await api('POST', '/chatbots', { name: 'Bakery helper', instructions: 'Help.' })).json()) as { id: string };
    expect((await api('PATCH', `/chatbots/${bot.id}`, { status: 'active' })).status).toBe(200);

    const visit = async (i: number) => {
      const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
      const started = (await (await fetch(`${first.url}/widget/v1/chatbots/${bot.id}/conversations`, { method: 'POST' })).json()) as { conversation_id: string; visitor_token: string };
      const headers = { authorization: `Bearer ${started.visitor_token}`, 'content-type': 'application/json' };
      const path = `/widget/v1/conversations/${started.conversation_id}`;
      const lead = await fetch(`${second.url}${path}/lead`, { method: 'POST', headers, body: JSON.stringify({ name: `Spam ${i} - visit http://evil.test`, email: `spam${i}@evil.test` }) });
      expect(lead.status, await lead.clone().text()).toBe(201);
      const handoff = await fetch(`${first.url}${path}/handoff`, { method: 'POST', headers, body: '{}' });
      expect(handoff.status, await handoff.clone().text()).toBe(200);
    };
    await Promise.all(Array.from({ length: VISITORS }, (_, i) => visit(i + 1)));

    await vi.waitFor(() => expect(smtp.messages.length).toBeGreaterThanOrEqual(PER_HOUR), { timeout: 30_000, interval: 100 });
    // Both runners poll every 400 ms: a mail beyond the budget would show within a few polls.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(smtp.messages).toHaveLength(PER_HOUR);
    expect(smtp.messages.every((mail) => mail.to.join() === 'owner@example.test')).toBe(true);
    expect(smtp.messages.map((mail) => /^Subject: (.*)$/m.exec(mail.raw)![1]).every((subject) => subject === 'New lead from Bakery helper' || subject === 'A visitor asks for a person: Bakery helper')).toBe(true);

    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`set search_path to "${env.DATABASE_SCHEMA}"`);
      const { rows } = await client.query<{ kind: string; state: string; count: string }>('select kind, state, count(*) as count from mail_jobs group by kind, state order by kind, state');
      const counts = Object.fromEntries(rows.map((row) => [`${row.kind} ${row.state}`, Number(row.count)]));
      const sentAlone = (counts['new_lead sent'] ?? 0) + (counts['handoff sent'] ?? 0);
      expect(sentAlone).toBe(PER_HOUR);
      expect((counts['new_lead held'] ?? 0) + (counts['handoff held'] ?? 0)).toBe(2 * VISITORS - PER_HOUR);
      expect(counts['digest pending']).toBe(1);
      expect(Object.keys(counts).filter((k) => !/^(new_lead|handoff) (sent|held)$|^digest pending$/.test(k))).toEqual([]);
    } finally {
      await client.end();
    }
  });
});

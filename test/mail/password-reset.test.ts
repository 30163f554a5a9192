import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { tokenHash } from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, uniqueEmail } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { resetTokenIn, startSmtpCapture, type SmtpCapture } from './smtp-capture.js';

const PUBLIC_URL = 'https://chat.example.test';
const SMTP_PASSWORD = 'smtp-secret-pass';
const LIMITS = { signInLimit: { perIpAndEmail: 1000, perIp: 100_000 } };

function post(t: TestApp, url: string, body: unknown) {
  return t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

// Password reset by email (issue 32, point 5), through a real SMTP server started here.
describe('password reset by email', () => {
  let smtp: SmtpCapture;
  let t: TestApp;
  const logLines: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpCapture({ username: 'mailer', password: SMTP_PASSWORD });
    t = await createTestApp(
      { ...LIMITS, logLevel: 'info', publicUrl: PUBLIC_URL, mail: { url: `smtp://mailer:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`, from: 'Chat Agent <noreply@example.test>' } },
      { logDestination: { write: (line) => void logLines.push(line) } },
    );
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const forgot = (email: string) => post(t, '/app/api/password/forgot', { email });
  const reset = (token: string, password: string) => post(t, '/app/api/password/reset', { token, password });
  const signInStatus = async (email: string, password: string) => (await post(t, '/app/api/signin', { email, password })).statusCode;

  it('forgot → an emailed one-time link → a new password: the old one and every session stop working, audited', async () => {
    const user = await signUp(t.app);
    const asked = await forgot(user.email.toUpperCase());
    expect(asked.statusCode, asked.body).toBe(202);

    const mail = await smtp.next();
    expect(mail.to).toEqual([user.email]);
    expect(mail.from).toBe('noreply@example.test');
    expect(mail.raw).toContain('Subject: Reset your password');
    expect(mail.raw).toContain(`${PUBLIC_URL}/reset-password?token=`);
    expect(mail.raw).toContain('text/html');
    expect(smtp.logins).toContainEqual({ username: 'mailer', password: SMTP_PASSWORD });
    const token = resetTokenIn(mail);
    // Only the token's hash is stored.
    const rows = await t.app.database.db.selectFrom('password_resets').select(['token_hash', 'used_at']).execute();
    expect(rows.map((r) => r.token_hash)).toContain(tokenHash(token));
    expect(JSON.stringify(rows)).not.toContain(token);

    // Same password rules as sign-up; a refused password does not use the link up.
    const weak = expectProblem(await reset(token, 'password123'), 400, 'validation_failed');
    expect(weak.errors).toEqual([{ pointer: '/password', message: 'is one of the most common passwords' }]);

    const done = await reset(token, 'a fresh reset secret');
    expect(done.statusCode, done.body).toBe(204);
    expectProblem(await user.request('GET', '/app/api/session'), 401, 'not_signed_in');
    expect(await signInStatus(user.email, user.password)).toBe(401);
    expect(await signInStatus(user.email, 'a fresh reset secret')).toBe(200);

    const reused = expectProblem(await reset(token, 'yet another secret'), 400, 'invalid_request');
    expect(reused.detail).toMatch(/invalid, expired or already used/);
    expect(await signInStatus(user.email, 'a fresh reset secret')).toBe(200);

    const events = (await t.app.services.audit.list(user.workspaceId, 1000)).filter((e) => e.action === 'user.password_changed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: { type: 'user', name: user.email }, target: { type: 'user' } });
    expect(JSON.stringify(events[0])).toContain('reset_link');
  });

  it('an unknown address gets the same 202 and no email', async () => {
    const user = await signUp(t.app);
    const known = await forgot(user.email);
    const unknown = await forgot(uniqueEmail('nobody'));
    expect(unknown.statusCode).toBe(202);
    expect(unknown.body).toBe(known.body);
    expect(unknown.headers['content-type']).toBe(known.headers['content-type']);
    await t.app.services.passwordResets.settled();
    const before = smtp.messages.length;
    // Everything started so far has been sent: exactly one email, to the known address.
    const mail = await smtp.next();
    expect(mail.to).toEqual([user.email]);
    expect(smtp.messages.length).toBe(before);
    expect(smtp.messages.filter((m) => m.to.some((to) => to.startsWith('nobody+')))).toEqual([]);
  });

  it('a link works once, within the hour, and a new password ends the other outstanding links', async () => {
    const user = await signUp(t.app);
    await forgot(user.email);
    const first = resetTokenIn(await smtp.next());
    await forgot(user.email);
    const second = resetTokenIn(await smtp.next());
    await forgot(user.email);
    const third = resetTokenIn(await smtp.next());

    // An hour later the link is refused.
    const past = new Date(Date.now() - 1000).toISOString();
    await t.app.database.db.updateTable('password_resets').set({ expires_at: past }).where('token_hash', '=', tokenHash(third)).execute();
    expectProblem(await reset(third, 'expired link secret'), 400, 'invalid_request');

    expect((await reset(second, 'second link secret')).statusCode).toBe(204);
    expectProblem(await reset(first, 'first link secret'), 400, 'invalid_request');
    expect(await signInStatus(user.email, 'second link secret')).toBe(200);
    expectProblem(await reset('not-a-token-we-ever-sent', 'whatever secret'), 400, 'invalid_request');
  });

  it('says at start where mail goes, and never logs the SMTP password', async () => {
    await vi.waitFor(() => expect(logLines.join('\n')).toContain(`Mail goes through 127.0.0.1:${smtp.port}`));
    expect(logLines.join('\n')).not.toContain(SMTP_PASSWORD);
  });
});

describe('password reset with mail off (SMTP_URL unset)', () => {
  let smtp: SmtpCapture;
  let t: TestApp;
  const logLines: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    t = await createTestApp({ ...LIMITS, logLevel: 'info' }, { logDestination: { write: (line) => void logLines.push(line) } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('answers the same 202 and sends nothing', async () => {
    const user = await signUp(t.app);
    const asked = await post(t, '/app/api/password/forgot', { email: user.email });
    expect(asked.statusCode, asked.body).toBe(202);
    await t.app.services.passwordResets.settled();
    expect(smtp.messages).toEqual([]);
    expect(await t.app.database.db.selectFrom('password_resets').select('user_id').execute()).toEqual([]);
    await vi.waitFor(() => expect(logLines.join('\n')).toContain('Mail is off (SMTP_URL is not set)'));
  });
});

describe('mail configuration', () => {
  it('is off without SMTP_URL, and refuses unusable values without repeating the password', () => {
    expect(loadConfig({}).mail).toBeNull();
    expect(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.test:465', MAIL_FROM: 'Support <help@example.test>' }).mail).toEqual({
      url: 'smtps://u:p@mail.example.test:465',
      from: 'Support <help@example.test>',
    });
    expect(() => loadConfig({ SMTP_URL: 'http://u:hunter2-secret@mail.example.test', MAIL_FROM: 'a@example.test' })).toThrow(/SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => loadConfig({ SMTP_URL: 'http://u:hunter2-secret@mail.example.test', MAIL_FROM: 'a@example.test' })).not.toThrow(/hunter2/);
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.test' })).toThrow(/MAIL_FROM must be an address/);
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.test', MAIL_FROM: 'not an address' })).toThrow(/MAIL_FROM/);
  });
});

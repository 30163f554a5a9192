import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { signIn, signUp, uniqueEmail } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { cli, CLI_ENTRY, freePort } from '../helpers/processes.js';

const ROOT = new URL('../../', import.meta.url).pathname;
/** Each CLI run starts a process: seconds on a busy machine. */
const SLOW = 120_000;

/** The CLI with `input` on its standard input (cli() of the helpers leaves stdin empty). */
function cliWithInput(env: Record<string, string>, input: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input);
  });
}

// Passwords (issue 29, point 7): at least 10 characters and not among the most common ones; a signed-in
// user changes theirs (other sessions end); the operator resets one with the CLI.
describe('passwords', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ signInLimit: { perIpAndEmail: 1000, perIp: 100_000 } });
  });
  afterAll(async () => t?.close());

  const signUpWith = (password: string, email = uniqueEmail()) =>
    t.app.inject({ method: 'POST', url: '/app/api/signup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password, workspace_name: 'Pw' }) });
  const signInStatus = async (email: string, password: string) =>
    (await t.app.inject({ method: 'POST', url: '/app/api/signin', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password }) })).statusCode;
  const passwordEvents = async (workspaceId: string) => (await t.app.services.audit.list(workspaceId, 1000)).filter((e) => e.action === 'user.password_changed');

  it('sign-up needs at least 10 characters that are not among the most common passwords', async () => {
    const short = expectProblem(await signUpWith('ninechars'), 400, 'validation_failed');
    expect(short.errors).toEqual([{ pointer: '/password', message: 'must be at least 10 characters' }]);
    for (const common of ['password123', 'qwertyuiop', '1234567890', 'Basketball']) {
      const refused = expectProblem(await signUpWith(common), 400, 'validation_failed');
      expect(refused.errors, common).toEqual([{ pointer: '/password', message: 'is one of the most common passwords' }]);
    }
    expect((await signUpWith('tenletters')).statusCode).toBe(201);
    // Through an invitation too.
    const owner = await signUp(t.app);
    const { token } = (await owner.request('POST', '/app/api/invitations', { role: 'member' })).json();
    const invited = await t.app.inject({ method: 'POST', url: '/app/api/signup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: uniqueEmail(), password: 'password123', invitation_token: token }) });
    expectProblem(invited, 400, 'validation_failed');
  });

  it('a signed-in user changes their password: the current one is required, other sessions end, this one stays, audited', async () => {
    const user = await signUp(t.app);
    const other = await signIn(t.app, user.email, user.password);
    const change = (body: unknown) => user.request('POST', '/app/api/account/password', body);

    const wrong = expectProblem(await change({ current_password: 'not my password', new_password: 'a brand new secret' }), 400, 'validation_failed');
    expect(wrong.errors).toEqual([{ pointer: '/current_password', message: 'is not your current password' }]);
    const weak = expectProblem(await change({ current_password: user.password, new_password: 'password123' }), 400, 'validation_failed');
    expect(weak.errors).toEqual([{ pointer: '/new_password', message: 'is one of the most common passwords' }]);
    expect((await other.request('GET', '/app/api/session')).statusCode).toBe(200);

    const changed = await change({ current_password: user.password, new_password: 'a brand new secret' });
    expect(changed.statusCode, changed.body).toBe(204);
    expect((await user.request('GET', '/app/api/session')).statusCode).toBe(200);
    expectProblem(await other.request('GET', '/app/api/session'), 401, 'not_signed_in');
    expect(await signInStatus(user.email, user.password)).toBe(401);
    expect(await signInStatus(user.email, 'a brand new secret')).toBe(200);

    const [event, ...more] = await passwordEvents(user.workspaceId);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ actor: { type: 'user', name: user.email }, target: { type: 'user' } });
    expect(JSON.stringify(event)).not.toContain('brand new');
    expectProblem(await t.app.inject({ method: 'POST', url: '/app/api/account/password', headers: { 'content-type': 'application/json' }, payload: '{}' }), 401, 'not_signed_in');
  });

  it.skipIf(!chromiumAvailable())('Settings → Account changes the password in the browser', { timeout: 60_000 }, async () => {
    await ensureWebBuild();
    const user = await signUp(t.app);
    const port = await freePort();
    await t.app.listen({ port, host: '127.0.0.1' });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      await page.goto(`http://127.0.0.1:${port}/signin`);
      await page.getByLabel('Email', { exact: true }).fill(user.email);
      await page.getByLabel('Password', { exact: true }).fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Account' }).click();
      await page.getByLabel('Current password').fill(user.password);
      await page.getByLabel('New password').fill('password123');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').filter({ hasText: 'most common passwords' }).waitFor();
      await page.getByLabel('New password').fill('changed in the browser');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Password changed.').waitFor();
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-account-password.png'), fullPage: true });
      expect(await signInStatus(user.email, 'changed in the browser')).toBe(200);
    } finally {
      await browser.close();
    }
  });

  it('`user reset-password --email E` sets a new password (from --password or stdin), ends the sessions, prints nothing secret, audited as the CLI', { timeout: SLOW }, async () => {
    const user = await signUp(t.app);
    const elsewhere = await signUp(t.app);
    const { token } = (await elsewhere.request('POST', '/app/api/invitations', { role: 'member' })).json();
    expect((await user.request('POST', '/app/api/invitations/accept', { token })).statusCode).toBe(200);

    const flag = await cli(t.databaseEnv, 'user', 'reset-password', '--email', user.email.toUpperCase(), '--password', 'operator chosen one');
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stdout + flag.stderr).not.toContain('operator chosen one');
    expect(flag.stdout).toMatch(/password of .* reset/);
    expectProblem(await user.request('GET', '/app/api/session'), 401, 'not_signed_in');
    expect(await signInStatus(user.email, 'operator chosen one')).toBe(200);
    // In every workspace of the user, as the CLI.
    for (const workspaceId of [user.workspaceId, elsewhere.workspaceId]) {
      const events = await passwordEvents(workspaceId);
      expect(events.map((e) => e.actor)).toEqual([{ type: 'system', id: 'cli', name: 'cli' }]);
    }

    const piped = await cliWithInput(t.databaseEnv, 'piped secret phrase\n', 'user', 'reset-password', '--email', user.email);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain('piped secret');
    expect(await signInStatus(user.email, 'piped secret phrase')).toBe(200);

    const weak = await cli(t.databaseEnv, 'user', 'reset-password', '--email', user.email, '--password', 'password123');
    expect(weak.code).not.toBe(0);
    expect(weak.stderr).toMatch(/most common passwords/);
    expect(weak.stderr).not.toContain('password123');
    const unknown = await cli(t.databaseEnv, 'user', 'reset-password', '--email', 'nobody@example.com', '--password', 'whatever it is 1');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no account/);
  });
});

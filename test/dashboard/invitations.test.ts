import fs from 'node:fs';
import path from 'node:path';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSchema, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, ensureWebBuild, launchChromium, SCREENSHOTS } from '../helpers/browser.js';
import { testClock } from '../helpers/clock.js';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { signIn, signUp, uniqueEmail, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { freePort } from '../helpers/processes.js';

const DAY_MS = 86_400_000;

// Invitation links (issue 29, point 4): they expire after INVITATION_TTL_DAYS, can be revoked, die with
// their creator's power to grant them, bind to the email they name, and every acceptance is audited.
describe('dashboard invitations', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ invitationTtlDays: 2 }, { clock });
  });
  afterAll(async () => t?.close());

  const lookup = (token: string) =>
    t.app.inject({ method: 'POST', url: '/app/api/invitations/lookup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token }) });
  const signUpWith = (token: string, email = uniqueEmail('invitee')) =>
    t.app.inject({ method: 'POST', url: '/app/api/signup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password: 'invitee password 1', invitation_token: token }) });
  async function invite(by: DashboardUser, body: { role: string; email?: string | null }) {
    const response = await by.request('POST', '/app/api/invitations', body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: string; token: string; expires_at: string; created_at: string };
  }
  async function memberId(owner: DashboardUser, email: string): Promise<string> {
    const members = (await owner.request('GET', '/app/api/members')).json() as { data: { email: string; user_id: string }[] };
    return members.data.find((m) => m.email === email)!.user_id;
  }
  const actions = async (workspaceId: string) => (await t.app.services.audit.list(workspaceId, 1000)).map((e) => e.action);

  it('INVITATION_TTL_DAYS sets how long a link works (default 7); an expired link is refused with 410', async () => {
    expect(loadConfig({}).invitationTtlDays).toBe(7);
    expect(loadConfig({ INVITATION_TTL_DAYS: '30' }).invitationTtlDays).toBe(30);
    expect(() => loadConfig({ INVITATION_TTL_DAYS: '0' })).toThrow(ConfigError);

    const owner = await signUp(t.app, { workspaceName: 'Expiring' });
    const created = await invite(owner, { role: 'member' });
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(2 * DAY_MS);
    expect((await lookup(created.token)).statusCode).toBe(200);

    clock.advance(2 * DAY_MS + 1000);
    try {
      expect(expectProblem(await lookup(created.token), 410, 'invitation_invalid').detail).toMatch(/expired/);
      expectProblem(await signUpWith(created.token), 410, 'invitation_invalid');
      const open = (await owner.request('GET', '/app/api/members')).json().invitations as unknown[];
      expect(open).toEqual([]);
    } finally {
      clock.step(-(2 * DAY_MS + 1000));
    }
  });

  it('DELETE /app/api/invitations/{id} revokes a link (audited); role rules are those of creating one', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Revoking' });
    const admin = await signUp(t.app, { invitationToken: (await invite(owner, { role: 'admin' })).token });
    const member = await signUp(t.app, { invitationToken: (await invite(owner, { role: 'member' })).token });

    const forMember = await invite(admin, { role: 'member' });
    const forOwner = await invite(owner, { role: 'owner' });
    const listed = (await owner.request('GET', '/app/api/members')).json().invitations as { id: string; expires_at: string }[];
    expect(listed.map((i) => i.id).sort()).toEqual([forMember.id, forOwner.id].sort());
    expect(listed.every((i) => typeof i.expires_at === 'string')).toBe(true);

    // A member cannot revoke, an admin cannot revoke an owner invitation, another workspace gets 404.
    expectProblem(await member.request('DELETE', `/app/api/invitations/${forMember.id}`), 403, 'insufficient_role');
    expectProblem(await admin.request('DELETE', `/app/api/invitations/${forOwner.id}`), 403, 'insufficient_role');
    const stranger = await signUp(t.app, { workspaceName: 'Elsewhere' });
    expectProblem(await stranger.request('DELETE', `/app/api/invitations/${forMember.id}`), 404, 'not_found');
    expectProblem(await owner.request('DELETE', '/app/api/invitations/inv_nonsense'), 404, 'not_found');

    const revoked = await admin.request('DELETE', `/app/api/invitations/${forMember.id}`);
    expect(revoked.statusCode, revoked.body).toBe(204);
    expect((await owner.request('DELETE', `/app/api/invitations/${forOwner.id}`)).statusCode).toBe(204);
    expect(expectProblem(await lookup(forMember.token), 410, 'invitation_invalid').detail).toMatch(/revoked/);
    expectProblem(await signUpWith(forOwner.token), 410, 'invitation_invalid');
    expect((await owner.request('GET', '/app/api/members')).json().invitations).toEqual([]);
    expectProblem(await owner.request('DELETE', `/app/api/invitations/${forMember.id}`), 410, 'invitation_invalid');

    const events = (await t.app.services.audit.list(owner.workspaceId, 1000)).filter((e) => e.action === 'invitation.revoked');
    expect(events.map((e) => [e.target.id, e.actor.name]).sort()).toEqual([[forMember.id, admin.email], [forOwner.id, owner.email]].sort());
  });

  it('a link stops working when its creator is removed or no longer holds a role that may grant it', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Creators' });
    // The admin has a workspace of their own too, so they can still sign in once removed from this one.
    const admin = await signUp(t.app, { workspaceName: 'Admin home' });
    expect((await admin.request('POST', '/app/api/invitations/accept', { token: (await invite(owner, { role: 'admin' })).token })).statusCode).toBe(200);
    const adminId = await memberId(owner, admin.email);

    // The review's case: an admin makes a link, is removed, and tries to come back through it.
    const comeback = await invite(admin, { role: 'admin' });
    const spare = await invite(admin, { role: 'member' });
    expect((await owner.request('DELETE', `/app/api/members/${adminId}`)).statusCode).toBe(204);
    expect(expectProblem(await lookup(comeback.token), 410, 'invitation_invalid').detail).toMatch(/created/);
    const back = await signIn(t.app, admin.email, admin.password);
    expectProblem(await back.request('POST', '/app/api/invitations/accept', { token: comeback.token }), 410, 'invitation_invalid');
    expectProblem(await signUpWith(spare.token), 410, 'invitation_invalid');
    expect(await t.app.services.users.roleIn(owner.workspaceId, adminId)).toBeUndefined();

    // Demoted: an admin's links die when they become a member; an owner's owner link when they become an admin.
    const second = await signUp(t.app, { invitationToken: (await invite(owner, { role: 'admin' })).token });
    const secondId = await memberId(owner, second.email);
    const fromSecond = await invite(second, { role: 'member' });
    expect((await owner.request('PATCH', `/app/api/members/${secondId}`, { role: 'member' })).statusCode).toBe(200);
    expectProblem(await lookup(fromSecond.token), 410, 'invitation_invalid');
    expect((await owner.request('PATCH', `/app/api/members/${secondId}`, { role: 'owner' })).statusCode).toBe(200);
    const ownerLink = await invite(owner, { role: 'owner' });
    const adminLink = await invite(owner, { role: 'admin' });
    const ownerId = await memberId(second, owner.email);
    expect((await second.request('PATCH', `/app/api/members/${ownerId}`, { role: 'admin' })).statusCode).toBe(200);
    expectProblem(await lookup(ownerLink.token), 410, 'invitation_invalid');
    expect((await lookup(adminLink.token)).statusCode).toBe(200);
    // A link that still works for its creator's role works for new people as before.
    expect((await signUpWith(adminLink.token)).statusCode).toBe(201);
  });

  it('a link that names an email can be used only by that email (sign-up or a signed-in user): 403 otherwise', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Named' });
    const bob = uniqueEmail('Bob');
    const named = await invite(owner, { role: 'member', email: bob });
    expect((await lookup(named.token)).json()).toMatchObject({ email: bob.toLowerCase() });

    const wrongSignUp = expectProblem(await signUpWith(named.token, uniqueEmail('mallory')), 403, 'invitation_email_mismatch');
    expect(wrongSignUp.detail).toMatch(/another email/);
    expect(await t.app.database.db.selectFrom('users').select('id').where('email', 'like', 'mallory%').execute()).toEqual([]);
    const someoneElse = await signUp(t.app, { workspaceName: 'Mallory Co' });
    expectProblem(await someoneElse.request('POST', '/app/api/invitations/accept', { token: named.token }), 403, 'invitation_email_mismatch');
    expect(await t.app.services.users.roleIn(owner.workspaceId, (await someoneElse.request('GET', '/app/api/session')).json().user.id)).toBeUndefined();

    // The named email (any case) still gets in: the failed attempts did not use the link up.
    const joined = await signUpWith(named.token, bob.toUpperCase());
    expect(joined.statusCode, joined.body).toBe(201);
    expect(joined.json().workspace_id).toBe(owner.workspaceId);
  });

  it('accepting is audited, also by someone who is already a member', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Audited' });
    const member = await signUp(t.app, { invitationToken: (await invite(owner, { role: 'member' })).token });
    const first = (await t.app.services.audit.list(owner.workspaceId, 1000)).filter((e) => e.action === 'invitation.accepted');
    expect(first.map((e) => e.actor.name)).toEqual([member.email]);

    const again = await invite(owner, { role: 'member' });
    const before = (await actions(owner.workspaceId)).length;
    const accepted = await member.request('POST', '/app/api/invitations/accept', { token: again.token });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const events = await t.app.services.audit.list(owner.workspaceId, 1000);
    expect(events).toHaveLength(before + 1);
    expect(events[0]).toMatchObject({ action: 'invitation.accepted', target: { type: 'invitation', id: again.id }, actor: { type: 'user', name: member.email } });
    expectProblem(await lookup(again.token), 410, 'invitation_invalid');
  });

  it.skipIf(!chromiumAvailable())('Settings → Members lists pending invitations with their expiry and revokes one', { timeout: 60_000 }, async () => {
    await ensureWebBuild();
    const owner = await signUp(t.app, { workspaceName: 'In the browser' });
    const port = await freePort();
    await t.app.listen({ port, host: '127.0.0.1' });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      page.on('dialog', (dialog) => void dialog.accept());
      await page.goto(`http://127.0.0.1:${port}/signin`);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('link', { name: 'Members' }).click();
      await page.getByLabel('Email (optional)').fill('carol@example.com');
      await page.getByRole('button', { name: 'Create invite link' }).click();
      const url = (await page.getByTestId('invite-link').textContent())!.trim();
      const row = page.getByRole('table', { name: 'Pending invitations' }).getByRole('row').filter({ hasText: 'carol@example.com' });
      await row.waitFor();
      const expires = (await t.app.services.invitations.listOpen({ actor: { type: 'user', id: 'x', name: 'x', workspaceId: owner.workspaceId }, request: { requestId: null, ip: null, userAgent: null } }))[0]!.expires_at;
      expect(await row.getByRole('cell').nth(3).textContent()).toBe(await page.evaluate((iso) => new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }), expires));
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-members-pending-invitations.png'), fullPage: true });
      await row.getByRole('button', { name: /^Revoke/ }).click();
      await page.getByRole('heading', { name: 'Pending invitations' }).waitFor({ state: 'detached' });
      expectProblem(await lookup(url.split('#')[1]!), 410, 'invitation_invalid');
    } finally {
      await browser.close();
    }
  });

  it('the revocation migration goes down and up again', async () => {
    const env = freshDatabaseEnv();
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const handle = openDatabase(config.database);
    try {
      await ensureSchema(handle, config.database);
      const schema = config.database.kind === 'postgres' ? config.database.schema : null;
      await migrateToLatest(handle.db, schema);
      await handle.db.selectFrom('invitations').select(['revoked_at', 'revoked_by']).execute();
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
      const { error } = await migrator.migrateTo('0009_idempotency_records_keyed');
      expect(error).toBeUndefined();
      await expect(handle.db.selectFrom('invitations').select('revoked_at').execute()).rejects.toThrow();
      expect(await migrateToLatest(handle.db, schema)).toContain('0010_invitation_revocation');
      expect(await handle.db.selectFrom('invitations').select(['revoked_at', 'revoked_by']).execute()).toEqual([]);
    } finally {
      await handle.close();
      await dropDatabase(env);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, signUp, uniqueEmail } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';

// Accounts and sessions of the dashboard API (/app/api) through the real app: sign-up, sign-in, cookies,
// CSRF, the sign-in rate limit, roles and invitations, workspace switching and isolation.
describe('dashboard accounts and sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ signInLimit: { perIpAndEmail: 3, perIp: 1000 } });
  });
  afterAll(async () => t?.close());

  it('sign-up creates the workspace with its owner, an HttpOnly SameSite session cookie, and audits both as the user', async () => {
    const email = uniqueEmail('Owner');
    const response = await t.app.inject({
      method: 'POST',
      url: '/app/api/signup',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email, password: 'long enough password', workspace_name: 'Acme Inc' }),
    });
    expect(response.statusCode, response.body).toBe(201);
    const cookie = String(response.headers['set-cookie']);
    expect(cookie).toMatch(/^sid=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/);
    const body = response.json();
    expect(body.user.email).toBe(email.toLowerCase());

    const stored = await t.app.database.db.selectFrom('users').select('password_hash').where('email', '=', email.toLowerCase()).executeTakeFirstOrThrow();
    expect(stored.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const sessionRows = await t.app.database.db.selectFrom('sessions').select('id').where('user_id', '=', body.user.id).execute();
    expect(sessionRows).toHaveLength(1);
    expect(cookie).not.toContain(sessionRows[0]!.id);

    const session = await t.app.inject({ method: 'GET', url: '/app/api/session', headers: { cookie: cookie.split(';')[0]! } });
    expect(session.json()).toMatchObject({ user: { email: email.toLowerCase() }, workspace: { name: 'Acme Inc', role: 'owner' }, csrf_token: body.csrf_token });

    const events = await t.app.services.audit.list(body.workspace_id);
    expect(events.map((e) => [e.action, e.actor.type, e.actor.id, e.actor.name])).toEqual([
      ['member.added', 'user', body.user.id, email.toLowerCase()],
      ['workspace.created', 'user', body.user.id, email.toLowerCase()],
    ]);
  });

  it('refuses a taken email (409), a short password and a bad email (400)', async () => {
    const first = await signUp(t.app);
    const again = await t.app.inject({ method: 'POST', url: '/app/api/signup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: first.email.toUpperCase(), password: 'another password', workspace_name: 'X' }) });
    expectProblem(again, 409, 'email_taken');
    const short = await t.app.inject({ method: 'POST', url: '/app/api/signup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: uniqueEmail(), password: 'short', workspace_name: 'X' }) });
    expect(expectProblem(short, 400, 'validation_failed').errors).toEqual([{ pointer: '/password', message: 'must be at least 10 characters' }]);
    const bad = await t.app.inject({ method: 'POST', url: '/app/api/signup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'not-an-email', password: 'long enough password', workspace_name: 'X' }) });
    expectProblem(bad, 400, 'validation_failed');
  });

  it('signs in with the right password only, and rate limits attempts per IP and email with Retry-After', async () => {
    const user = await signUp(t.app);
    const attempt = (password: string, email = user.email) =>
      t.app.inject({ method: 'POST', url: '/app/api/signin', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password }) });
    expect((await attempt(user.password)).statusCode).toBe(200);
    expectProblem(await attempt('wrong password'), 401, 'invalid_credentials');
    expectProblem(await attempt('whatever password', uniqueEmail('nobody')), 401, 'invalid_credentials');
    const limited = await attempt(user.password);
    const problem = expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(problem['violated-policies']).toEqual(['sign_in']);
    // Another email from the same IP still has its own budget.
    const other = await signUp(t.app);
    expect((await attempt(other.password, other.email)).statusCode).toBe(200);
  });

  it('answers 401 without a session and after sign-out', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/app/api/chatbots' }), 401, 'not_signed_in');
    expectProblem(await t.app.inject({ method: 'GET', url: '/app/api/chatbots', headers: { cookie: 'sid=forged-token-forged-token-forged-token-000' } }), 401, 'not_signed_in');
    const user = await signUp(t.app);
    expect((await user.request('GET', '/app/api/chatbots')).statusCode).toBe(200);
    const out = await user.request('POST', '/app/api/signout');
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^sid=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/);
    expectProblem(await user.request('GET', '/app/api/chatbots'), 401, 'not_signed_in');
  });

  it('refuses writes without the CSRF token, with a wrong one, or from another origin, and writes nothing', async () => {
    const user = await signUp(t.app);
    const body = JSON.stringify({ name: 'Sneaky' });
    const post = (headers: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: '/app/api/chatbots', headers: { cookie: user.cookie, 'content-type': 'application/json', ...headers }, payload: body });
    expectProblem(await post({}), 403, 'csrf_failed');
    expectProblem(await post({ 'x-csrf-token': 'x'.repeat(43) }), 403, 'csrf_failed');
    expectProblem(await post({ 'x-csrf-token': user.csrf, origin: 'https://evil.example' }), 403, 'csrf_failed');
    expectProblem(await post({ 'x-csrf-token': user.csrf, 'sec-fetch-site': 'cross-site' }), 403, 'csrf_failed');
    // Sign-in from another site is refused too (login CSRF).
    const crossSignIn = await t.app.inject({ method: 'POST', url: '/app/api/signin', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, payload: JSON.stringify({ email: user.email, password: user.password }) });
    expectProblem(crossSignIn, 403, 'csrf_failed');
    const list = await user.request('GET', '/app/api/chatbots');
    expect(list.json().data).toEqual([]);
    expect((await post({ 'x-csrf-token': user.csrf })).statusCode).toBe(201);
  });

  it("keeps workspaces apart: one workspace's session cannot read or change another's resources (404)", async () => {
    const alice = await signUp(t.app, { workspaceName: 'Alice Co' });
    const bob = await signUp(t.app, { workspaceName: 'Bob Co' });
    const bot = (await alice.request('POST', '/app/api/chatbots', { name: 'Alice agent', instructions: 'Help.' })).json();
    expectProblem(await bob.request('GET', `/app/api/chatbots/${bot.id}`), 404, 'not_found');
    expectProblem(await bob.request('PATCH', `/app/api/chatbots/${bot.id}`, { name: 'Stolen' }), 404, 'not_found');
    expectProblem(await bob.request('POST', `/app/api/chatbots/${bot.id}/preview`), 404, 'not_found');
    expect((await bob.request('GET', '/app/api/chatbots')).json().data).toEqual([]);
    const key = (await alice.request('POST', '/app/api/api-keys', { name: 'k', scopes: ['leads:read'] })).json();
    expectProblem(await bob.request('POST', `/app/api/api-keys/${key.id}/revoke`), 404, 'not_found');
    // Switching to a workspace one is not a member of is a 404 as well.
    expectProblem(await bob.request('POST', '/app/api/session/workspace', { workspace_id: alice.workspaceId }), 404, 'not_found');
    expect((await alice.request('GET', `/app/api/chatbots/${bot.id}`)).json().name).toBe('Alice agent');
  });

  it('invitations: a one-time link with a role; members cannot manage keys or members; users switch workspaces', async () => {
    const owner = await signUp(t.app, { workspaceName: 'Team' });
    const invite = await owner.request('POST', '/app/api/invitations', { role: 'member' });
    expect(invite.statusCode, invite.body).toBe(201);
    const { token, url } = invite.json();
    expect(url).toMatch(/\/invite#[A-Za-z0-9_-]{43}$/);
    const lookup = () => t.app.inject({ method: 'POST', url: '/app/api/invitations/lookup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token }) });
    expect((await lookup()).json()).toMatchObject({ workspace_name: 'Team', role: 'member' });

    const member = await signUp(t.app, { invitationToken: token });
    expect(member.workspaceId).toBe(owner.workspaceId);
    expectProblem(await lookup(), 410, 'invitation_invalid');

    // A member works with agents but cannot reach key or member management.
    expect((await member.request('POST', '/app/api/chatbots', { name: 'Member agent' })).statusCode).toBe(201);
    expectProblem(await member.request('GET', '/app/api/api-keys'), 403, 'insufficient_role');
    expectProblem(await member.request('POST', '/app/api/api-keys', { name: 'k', scopes: ['leads:read'] }), 403, 'insufficient_role');
    expectProblem(await member.request('GET', '/app/api/members'), 403, 'insufficient_role');
    expectProblem(await member.request('POST', '/app/api/invitations', { role: 'admin' }), 403, 'insufficient_role');
    expect(await t.app.services.apiKeys.list({ actor: { type: 'system', id: 't', name: 't', workspaceId: owner.workspaceId }, request: { requestId: null, ip: null, userAgent: null } })).toEqual([]);

    // The owner promotes the member to admin; the last owner cannot be demoted.
    const members = (await owner.request('GET', '/app/api/members')).json();
    const memberId = members.data.find((m: { email: string }) => m.email === member.email).user_id;
    const ownerId = members.data.find((m: { email: string }) => m.email === owner.email).user_id;
    expect((await owner.request('PATCH', `/app/api/members/${memberId}`, { role: 'admin' })).json().role).toBe('admin');
    expect((await member.request('GET', '/app/api/api-keys')).statusCode).toBe(200);
    expectProblem(await member.request('PATCH', `/app/api/members/${ownerId}`, { role: 'member' }), 403, 'insufficient_role');
    expectProblem(await owner.request('PATCH', `/app/api/members/${ownerId}`, { role: 'admin' }), 409, 'last_owner');

    // The member (now admin) also has their own workspace and switches between the two.
    const ownOther = await signUp(t.app, { workspaceName: 'Elsewhere' });
    const otherInvite = (await ownOther.request('POST', '/app/api/invitations', { role: 'member' })).json();
    expect((await member.request('POST', '/app/api/invitations/accept', { token: otherInvite.token })).statusCode).toBe(200);
    const session = (await member.request('GET', '/app/api/session')).json();
    expect(session.workspace).toMatchObject({ id: ownOther.workspaceId, role: 'member' });
    expect(session.workspaces.map((w: { name: string }) => w.name)).toEqual(['Team', 'Elsewhere']);
    expect((await member.request('GET', '/app/api/chatbots')).json().data).toEqual([]);
    expect((await member.request('POST', '/app/api/session/workspace', { workspace_id: owner.workspaceId })).statusCode).toBe(204);
    expect((await member.request('GET', '/app/api/chatbots')).json().data.map((b: { name: string }) => b.name)).toEqual(['Member agent']);

    // Removed members lose their sessions in that workspace.
    expect((await owner.request('DELETE', `/app/api/members/${memberId}`)).statusCode).toBe(204);
    expectProblem(await member.request('GET', '/app/api/chatbots'), 401, 'not_signed_in');
    const again = await signIn(t.app, member.email, member.password);
    expect(again.workspaceId).toBe(ownOther.workspaceId);
    const actions = (await t.app.services.audit.list(owner.workspaceId)).map((e) => `${e.action}:${e.actor.name}`);
    expect(actions).toEqual(expect.arrayContaining([`member.removed:${owner.email}`, `member.role_changed:${owner.email}`, `member.added:${member.email}`, `invitation.created:${owner.email}`]));
  });

  it('marks the cookie Secure when the public URL is https', async () => {
    const secure = await createTestApp({ publicUrl: 'https://agents.example.com' });
    try {
      const response = await secure.app.inject({
        method: 'POST',
        url: '/app/api/signup',
        headers: { 'content-type': 'application/json', origin: 'https://agents.example.com' },
        payload: JSON.stringify({ email: uniqueEmail(), password: 'long enough password', workspace_name: 'Secure Co' }),
      });
      expect(response.statusCode, response.body).toBe(201);
      expect(String(response.headers['set-cookie'])).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await secure.close();
    }
  });

  it('keeps /app/api out of the public OpenAPI document', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi' })).json();
    expect(Object.keys(document.paths).some((p) => p.includes('/app/'))).toBe(false);
  });
});

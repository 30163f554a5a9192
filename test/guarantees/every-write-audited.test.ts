import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/http/scopes.js';
import { systemContext } from '../../src/lib/actor.js';
import { tokenHash } from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, signUp, uniqueEmail, type DashboardUser } from '../helpers/dashboard.js';
import { send } from '../helpers/http.js';

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
const AUDITED_PREFIXES = ['/api/v1/', '/app/api/'];

/**
 * Every route the app has, read from the app itself (`printRoutes`), as "METHOD /path" with the path's
 * parameters as Fastify writes them (`:id`). A tree line is `<indent>── <segment> (METHODS)`; the indent
 * (4 characters a level) tells whose child a segment is.
 */
function routesOf(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([\s│├└─]*?)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const fullPath = (stack[depth - 1] ?? '') + match[2]!;
    stack[depth] = fullPath;
    stack.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) routes.push(`${method} ${fullPath}`);
  }
  return routes;
}

/** What one case did: the answer, the workspace whose audit log must show it, and the action expected there. */
interface Outcome {
  response: LightMyRequestResponse;
  workspaceId: string;
  action: string;
}

// Routes that take POST but write nothing, each with the reason. Anything else that writes must have a case.
const NOT_WRITES: Record<string, string> = {
  'POST /app/api/invitations/lookup':
    'reads an invitation (workspace, role, email) for the accept page; POST only so the token travels in the body, never in a logged URL',
  'POST /app/api/provider/test':
    'calls the model provider with the settings in the form (or the saved ones) and reports how it answered; stores nothing',
  'POST /app/api/password/forgot':
    'only stores and emails a one-time reset link (when mail is on and the address has an account): the account changes when the link is used, by POST /app/api/password/reset (audited)',
};

// The one test that holds "every successful write is audited" (issue 29, point 4): every write route of
// /api/v1 and /app/api, enumerated from the app, has a case here that calls it successfully and finds the
// audit event it wrote. A new write route without a case fails this test.
describe('every write route is audited', () => {
  let t: TestApp;
  let owner: DashboardUser;
  let key: string;
  const state: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp({ signInLimit: { perIpAndEmail: 1000, perIp: 100_000 } }, { replyWorker: false });
    owner = await signUp(t.app, { workspaceName: 'Walked' });
    key = (await t.app.services.apiKeys.create(systemContext(owner.workspaceId, 'test'), { name: 'walk key', scopes: [...SCOPES] })).secret;
  });
  afterAll(async () => t?.close());

  const api = (method: string, url: string, body?: unknown) => send(t.app, key, method, url, body);
  const ws = () => owner.workspaceId;
  const created = (response: LightMyRequestResponse, name: string) => {
    if (response.statusCode < 300) state[name] = response.json().id;
    return response;
  };
  async function newMember(role: string): Promise<{ user: DashboardUser; id: string }> {
    const { token } = (await owner.request('POST', '/app/api/invitations', { role })).json();
    const user = await signUp(t.app, { invitationToken: token });
    return { user, id: (await user.request('GET', '/app/api/session')).json().user.id };
  }

  // In the order they run: later cases use what earlier ones made.
  const CASES: Record<string, () => Promise<Outcome>> = {
    'POST /api/v1/chatbots': async () => ({ response: created(await api('POST', '/api/v1/chatbots', { name: 'API agent', instructions: 'Help.' }), 'apiBot'), workspaceId: ws(), action: 'chatbot.created' }),
    'PATCH /api/v1/chatbots/:id': async () => ({ response: await api('PATCH', `/api/v1/chatbots/${state.apiBot}`, { status: 'active' }), workspaceId: ws(), action: 'chatbot.updated' }),
    'POST /api/v1/leads': async () => ({ response: created(await api('POST', '/api/v1/leads', { name: 'Ada', email: 'ada@example.com' }), 'apiLead'), workspaceId: ws(), action: 'lead.created' }),
    'PATCH /api/v1/leads/:id': async () => ({ response: await api('PATCH', `/api/v1/leads/${state.apiLead}`, { status: 'contacted' }), workspaceId: ws(), action: 'lead.updated' }),
    'POST /api/v1/chatbots/:id/sources': async () => ({ response: created(await api('POST', `/api/v1/chatbots/${state.apiBot}/sources`, { type: 'text', title: 'Hours', content: 'Open 9 to 5.' }), 'source'), workspaceId: ws(), action: 'source.created' }),
    'POST /api/v1/chatbots/:id/sources/:source_id/sync': async () => ({ response: await api('POST', `/api/v1/chatbots/${state.apiBot}/sources/${state.source}/sync`), workspaceId: ws(), action: 'source.sync_requested' }),
    'DELETE /api/v1/chatbots/:id/sources/:source_id': async () => ({ response: await api('DELETE', `/api/v1/chatbots/${state.apiBot}/sources/${state.source}`), workspaceId: ws(), action: 'source.deleted' }),
    // Webhooks (issue 32): a public address literal, so no DNS and no private-address refusal; no runner sends anything here.
    'POST /api/v1/webhook_endpoints': async () => ({ response: created(await api('POST', '/api/v1/webhook_endpoints', { url: 'https://1.1.1.1/hooks', events: ['*'] }), 'webhook'), workspaceId: ws(), action: 'webhook_endpoint.created' }),
    'PATCH /api/v1/webhook_endpoints/:id': async () => ({ response: await api('PATCH', `/api/v1/webhook_endpoints/${state.webhook}`, { description: 'CRM' }), workspaceId: ws(), action: 'webhook_endpoint.updated' }),
    'POST /api/v1/webhook_endpoints/:id/rotate_secret': async () => ({ response: await api('POST', `/api/v1/webhook_endpoints/${state.webhook}/rotate_secret`), workspaceId: ws(), action: 'webhook_endpoint.secret_rotated' }),
    'POST /api/v1/webhook_endpoints/:id/test': async () => ({ response: created(await api('POST', `/api/v1/webhook_endpoints/${state.webhook}/test`), 'delivery'), workspaceId: ws(), action: 'webhook_endpoint.test_sent' }),
    'POST /api/v1/webhook_endpoints/:id/deliveries/:delivery_id/resend': async () => ({ response: await api('POST', `/api/v1/webhook_endpoints/${state.webhook}/deliveries/${state.delivery}/resend`), workspaceId: ws(), action: 'webhook_delivery.resent' }),
    'DELETE /api/v1/webhook_endpoints/:id': async () => ({ response: await api('DELETE', `/api/v1/webhook_endpoints/${state.webhook}`), workspaceId: ws(), action: 'webhook_endpoint.deleted' }),
    'POST /app/api/chatbots': async () => ({ response: created(await owner.request('POST', '/app/api/chatbots', { name: 'Dashboard agent' }), 'bot'), workspaceId: ws(), action: 'chatbot.created' }),
    'PATCH /app/api/chatbots/:id': async () => ({ response: await owner.request('PATCH', `/app/api/chatbots/${state.bot}`, { instructions: 'Be brief.' }), workspaceId: ws(), action: 'chatbot.updated' }),
    'POST /app/api/chatbots/:id/preview': async () => {
      const response = await owner.request('POST', `/app/api/chatbots/${state.bot}/preview`);
      if (response.statusCode === 201) state.conversation = response.json().conversation.id;
      return { response, workspaceId: ws(), action: 'conversation.created' };
    },
    'POST /app/api/chatbots/:id/preview/:conversation_id/messages': async () => ({
      response: await owner.request('POST', `/app/api/chatbots/${state.bot}/preview/${state.conversation}/messages`, { content: 'Hello?' }),
      workspaceId: ws(),
      action: 'message.created',
    }),
    'POST /api/v1/conversations/:id/messages': async () => ({ response: await api('POST', `/api/v1/conversations/${state.conversation}/messages`, { content: 'From the API', role: 'operator' }), workspaceId: ws(), action: 'message.created' }),
    'POST /app/api/chatbots/:id/sources': async () => ({ response: created(await owner.request('POST', `/app/api/chatbots/${state.bot}/sources`, { type: 'qa', question: 'Parking?', answer: 'Behind the shop.' }), 'dashSource'), workspaceId: ws(), action: 'source.created' }),
    'POST /app/api/chatbots/:id/sources/:source_id/sync': async () => ({ response: await owner.request('POST', `/app/api/chatbots/${state.bot}/sources/${state.dashSource}/sync`), workspaceId: ws(), action: 'source.sync_requested' }),
    'DELETE /app/api/chatbots/:id/sources/:source_id': async () => ({ response: await owner.request('DELETE', `/app/api/chatbots/${state.bot}/sources/${state.dashSource}`), workspaceId: ws(), action: 'source.deleted' }),
    'POST /app/api/conversations/:id/messages': async () => ({ response: await owner.request('POST', `/app/api/conversations/${state.conversation}/messages`, { content: 'An operator here.' }), workspaceId: ws(), action: 'message.created' }),
    'POST /app/api/conversations/:id/hand-back': async () => ({ response: await owner.request('POST', `/app/api/conversations/${state.conversation}/hand-back`), workspaceId: ws(), action: 'conversation.handed_back' }),
    'POST /app/api/conversations/:id/close': async () => ({ response: await owner.request('POST', `/app/api/conversations/${state.conversation}/close`), workspaceId: ws(), action: 'conversation.closed' }),
    'POST /app/api/leads': async () => ({ response: created(await owner.request('POST', '/app/api/leads', { name: 'Bea', email: 'bea@example.com' }), 'lead'), workspaceId: ws(), action: 'lead.created' }),
    'PATCH /app/api/leads/:id': async () => ({ response: await owner.request('PATCH', `/app/api/leads/${state.lead}`, { company: 'Bakery' }), workspaceId: ws(), action: 'lead.updated' }),
    'POST /app/api/webhook-endpoints': async () => ({ response: created(await owner.request('POST', '/app/api/webhook-endpoints', { url: 'https://1.1.1.1/hooks', events: ['lead.created'] }), 'dashWebhook'), workspaceId: ws(), action: 'webhook_endpoint.created' }),
    'PATCH /app/api/webhook-endpoints/:id': async () => ({ response: await owner.request('PATCH', `/app/api/webhook-endpoints/${state.dashWebhook}`, { enabled: false }), workspaceId: ws(), action: 'webhook_endpoint.updated' }),
    'POST /app/api/webhook-endpoints/:id/rotate-secret': async () => ({ response: await owner.request('POST', `/app/api/webhook-endpoints/${state.dashWebhook}/rotate-secret`), workspaceId: ws(), action: 'webhook_endpoint.secret_rotated' }),
    'POST /app/api/webhook-endpoints/:id/test': async () => {
      await owner.request('PATCH', `/app/api/webhook-endpoints/${state.dashWebhook}`, { enabled: true });
      return { response: created(await owner.request('POST', `/app/api/webhook-endpoints/${state.dashWebhook}/test`), 'dashDelivery'), workspaceId: ws(), action: 'webhook_endpoint.test_sent' };
    },
    'POST /app/api/webhook-endpoints/:id/deliveries/:delivery_id/resend': async () => ({ response: await owner.request('POST', `/app/api/webhook-endpoints/${state.dashWebhook}/deliveries/${state.dashDelivery}/resend`), workspaceId: ws(), action: 'webhook_delivery.resent' }),
    'DELETE /app/api/webhook-endpoints/:id': async () => ({ response: await owner.request('DELETE', `/app/api/webhook-endpoints/${state.dashWebhook}`), workspaceId: ws(), action: 'webhook_endpoint.deleted' }),
    'PUT /app/api/provider/settings': async () => ({ response: await owner.request('PUT', '/app/api/provider/settings', { provider: 'builtin' }), workspaceId: ws(), action: 'provider_settings.updated' }),
    'POST /app/api/api-keys': async () => ({ response: created(await owner.request('POST', '/app/api/api-keys', { name: 'k', scopes: ['leads:read'] }), 'key'), workspaceId: ws(), action: 'api_key.created' }),
    'POST /app/api/api-keys/:id/revoke': async () => ({ response: await owner.request('POST', `/app/api/api-keys/${state.key}/revoke`), workspaceId: ws(), action: 'api_key.revoked' }),
    'POST /app/api/invitations': async () => ({ response: created(await owner.request('POST', '/app/api/invitations', { role: 'member' }), 'invitation'), workspaceId: ws(), action: 'invitation.created' }),
    'DELETE /app/api/invitations/:id': async () => ({ response: await owner.request('DELETE', `/app/api/invitations/${state.invitation}`), workspaceId: ws(), action: 'invitation.revoked' }),
    'POST /app/api/signup': async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/app/api/signup',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email: uniqueEmail('walker'), password: 'walking the routes', workspace_name: 'Second' }),
      });
      return { response, workspaceId: response.json().workspace_id, action: 'workspace.created' };
    },
    'POST /app/api/invitations/accept': async () => {
      const other = await signUp(t.app, { workspaceName: 'Visitor home' });
      const { token } = (await owner.request('POST', '/app/api/invitations', { role: 'member' })).json();
      return { response: await other.request('POST', '/app/api/invitations/accept', { token }), workspaceId: ws(), action: 'invitation.accepted' };
    },
    'POST /app/api/session/workspace': async () => {
      const other = await signUp(t.app, { workspaceName: 'Switcher home' });
      const { token } = (await owner.request('POST', '/app/api/invitations', { role: 'member' })).json();
      await other.request('POST', '/app/api/invitations/accept', { token });
      return { response: await other.request('POST', '/app/api/session/workspace', { workspace_id: other.workspaceId }), workspaceId: other.workspaceId, action: 'session.workspace_switched' };
    },
    'PATCH /app/api/members/:user_id': async () => {
      const { id } = await newMember('member');
      state.member = id;
      return { response: await owner.request('PATCH', `/app/api/members/${id}`, { role: 'admin' }), workspaceId: ws(), action: 'member.role_changed' };
    },
    'DELETE /app/api/members/:user_id': async () => ({ response: await owner.request('DELETE', `/app/api/members/${state.member}`), workspaceId: ws(), action: 'member.removed' }),
    'POST /app/api/signin': async () => {
      const response = await t.app.inject({ method: 'POST', url: '/app/api/signin', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: owner.email, password: owner.password }) });
      return { response, workspaceId: ws(), action: 'user.signed_in' };
    },
    'POST /app/api/account/password': async () => {
      const response = await owner.request('POST', '/app/api/account/password', { current_password: owner.password, new_password: 'the walk changed it' });
      if (response.statusCode === 204) owner = { ...owner, password: 'the walk changed it' };
      return { response, workspaceId: ws(), action: 'user.password_changed' };
    },
    'PATCH /app/api/account/notifications': async () => ({ response: await owner.request('PATCH', '/app/api/account/notifications', { notify_handoff: false }), workspaceId: ws(), action: 'member.notifications_changed' }),
    'POST /app/api/password/reset': async () => {
      const other = await signUp(t.app, { workspaceName: 'Reset home' });
      const userId = (await other.request('GET', '/app/api/session')).json().user.id;
      // Mail is off here: the link is stored as /password/forgot would store it (test/mail/ sends it for real).
      const now = Date.now();
      await t.app.database.db.insertInto('password_resets').values({ token_hash: tokenHash('walk-reset-token'), user_id: userId, created_at: new Date(now).toISOString(), expires_at: new Date(now + 3_600_000).toISOString(), used_at: null }).execute();
      const response = await t.app.inject({ method: 'POST', url: '/app/api/password/reset', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token: 'walk-reset-token', password: 'the walk reset it' }) });
      return { response, workspaceId: other.workspaceId, action: 'user.password_changed' };
    },
    'POST /app/api/signout': async () => {
      const session = await signIn(t.app, owner.email, owner.password);
      return { response: await session.request('POST', '/app/api/signout'), workspaceId: ws(), action: 'user.signed_out' };
    },
  };

  it('every write route of /api/v1 and /app/api has a case here, or is listed as writing nothing with the reason', () => {
    const writes = routesOf(t.app).filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return WRITE_METHODS.has(method) && AUDITED_PREFIXES.some((prefix) => path.startsWith(prefix));
    });
    expect(writes.length).toBeGreaterThan(20);
    const covered = new Set([...Object.keys(CASES), ...Object.keys(NOT_WRITES)]);
    expect(writes.filter((route) => !covered.has(route)), 'write routes without a case').toEqual([]);
    expect([...covered].filter((route) => !writes.includes(route)), 'cases for routes the app does not have').toEqual([]);
  });

  it('each successful write appends its audit event', async () => {
    const missing: string[] = [];
    for (const [route, run] of Object.entries(CASES)) {
      const before = new Set((await t.app.database.db.selectFrom('audit_events').select('id').execute()).map((row) => row.id));
      const outcome = await run();
      if (outcome.response.statusCode >= 300) {
        missing.push(`${route} → ${outcome.response.statusCode} ${outcome.response.body}`);
        continue;
      }
      const appended = (await t.app.services.audit.list(outcome.workspaceId, 1000)).filter((event) => !before.has(event.id));
      if (!appended.some((event) => event.action === outcome.action)) missing.push(`${route} → no ${outcome.action} (got ${appended.map((e) => e.action).join(', ') || 'nothing'})`);
    }
    expect(missing).toEqual([]);
  });
});

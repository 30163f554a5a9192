import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** A signed-in dashboard browser, as inject sees it: the session cookie and the CSRF token. */
export interface DashboardUser {
  email: string;
  password: string;
  workspaceId: string;
  cookie: string;
  csrf: string;
  /** Sends a request with the cookie and (on non-GET) the CSRF token and a same-origin Origin. */
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** The `sid=…` pair from a response's Set-Cookie. */
export function sessionCookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^(sid=[^;]+)/.exec(value ?? '');
  if (!match) throw new Error(`no session cookie in ${JSON.stringify(header)}`);
  return match[1]!;
}

function client(app: FastifyInstance, cookie: string, csrf: string) {
  return (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: {
        cookie,
        ...(method === 'GET' ? {} : { 'x-csrf-token': csrf, origin: 'http://localhost:80' }),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
}

/** A unique email for a test account. */
export function uniqueEmail(name = 'user'): string {
  return `${name}+${Math.random().toString(36).slice(2, 10)}@example.com`;
}

/** Signs up a new account (and its workspace) through /app/api/signup. */
export async function signUp(app: FastifyInstance, overrides: { email?: string; password?: string; workspaceName?: string; invitationToken?: string } = {}): Promise<DashboardUser> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? 'correct horse battery';
  const response = await app.inject({
    method: 'POST',
    url: '/app/api/signup',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      email,
      password,
      ...(overrides.invitationToken ? { invitation_token: overrides.invitationToken } : { workspace_name: overrides.workspaceName ?? 'Acme' }),
    }),
  });
  if (response.statusCode !== 201) throw new Error(`signUp: ${response.statusCode} ${response.body}`);
  const body = response.json() as { workspace_id: string; csrf_token: string };
  const cookie = sessionCookieOf(response);
  return { email, password, workspaceId: body.workspace_id, cookie, csrf: body.csrf_token, request: client(app, cookie, body.csrf_token) };
}

/** Signs in an existing account. */
export async function signIn(app: FastifyInstance, email: string, password: string): Promise<DashboardUser> {
  const response = await app.inject({ method: 'POST', url: '/app/api/signin', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password }) });
  if (response.statusCode !== 200) throw new Error(`signIn: ${response.statusCode} ${response.body}`);
  const body = response.json() as { workspace_id: string; csrf_token: string };
  const cookie = sessionCookieOf(response);
  return { email, password, workspaceId: body.workspace_id, cookie, csrf: body.csrf_token, request: client(app, cookie, body.csrf_token) };
}

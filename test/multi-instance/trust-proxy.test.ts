import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { expectProblem } from '../helpers/http.js';
import { cli, cliJson, cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';

// TRUST_PROXY through two server processes on one PostgreSQL and one Redis: one instance is told the hop
// count (one proxy in front), the other the proxies' addresses (a loopback proxy behind an edge proxy in
// 10.0.0.0/8). The client IP is the right-most X-Forwarded-For address the proxies did not add: a client
// that writes its own leftmost entries neither gets a fresh per-IP budget nor a forged address in the
// audit log. Runs in the PostgreSQL + Redis tier.

const SIGN_IN_PER_IP = 4;
const WIDGET_PER_IP = 4;
const EDGE_PROXY = '10.0.0.5';

/** A client address of its own per test and run (budgets live in a shared Redis). */
function clientIp(): string {
  const octet = () => 1 + Math.floor(Math.random() * 254);
  return `198.18.${octet()}.${octet()}`;
}

describe('TRUST_PROXY on two instances (hop count and proxy list) on one PostgreSQL and one Redis', () => {
  let env: Record<string, string>;
  let byHops: ServerProcess;
  let byList: ServerProcess;

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL and TEST_REDIS_URL');
    env = freshDatabaseEnv();
    await cli(env, 'migrate');
    const limits = {
      SIGN_IN_ATTEMPTS_PER_IP_PER_15_MINUTES: String(SIGN_IN_PER_IP),
      SIGN_IN_ATTEMPTS_PER_15_MINUTES: '1000',
      WIDGET_RATE_PER_IP_PER_MINUTE: String(WIDGET_PER_IP),
    };
    [byHops, byList] = await Promise.all([
      startServer({ ...env, ...limits, TRUST_PROXY: '1' }),
      startServer({ ...env, ...limits, TRUST_PROXY: '127.0.0.0/8, 10.0.0.0/8' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([byHops?.stop(), byList?.stop()]);
    if (env) await dropDatabase(env);
  });

  /** X-Forwarded-For as it reaches each instance: the client's own (forged) entry, then what the proxies appended. */
  function forwardedFor(server: ServerProcess, client: string, forged: string): string {
    return server === byHops ? `${forged}, ${client}` : `${forged}, ${client}, ${EDGE_PROXY}`;
  }

  async function problemOf(response: Response) {
    const body = await response.text();
    return expectProblem({ statusCode: response.status, headers: Object.fromEntries(response.headers), body }, response.status, 'rate_limited');
  }

  it('a forged leftmost X-Forwarded-For entry does not give a fresh sign-in budget, on either instance', async () => {
    const client = clientIp();
    const attempt = (server: ServerProcess, forged: string, from = client) =>
      fetch(`${server.url}/app/api/signin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor(server, from, forged) },
        body: JSON.stringify({ email: `nobody+${Math.random().toString(36).slice(2)}@example.com`, password: 'not the password' }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_PER_IP + 2; i++) statuses.push((await attempt(i % 2 ? byList : byHops, `203.0.113.${i + 1}`)).status);
    expect(statuses).toEqual([...Array(SIGN_IN_PER_IP).fill(401), 429, 429]);
    const refused = await attempt(byHops, '203.0.113.200');
    expect(refused.status).toBe(429);
    await problemOf(refused);
    // Another client behind the same proxies has a budget of its own.
    expect((await attempt(byList, '203.0.113.1', clientIp())).status).toBe(401);
  });

  it('a forged leftmost entry does not give a fresh widget budget, and the audit log records the real client', async () => {
    const tenant = await cliTenant(env);
    const api = (method: string, path: string, body: unknown) =>
      fetch(`${byHops.url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bot = (await (await api('POST', '/chatbots', { name: 'Proxy test', instructions: 'Be brief.' })).json()) as { id: string };
    expect((await api('PATCH', `/chatbots/${bot.id}`, { status: 'active' })).status).toBe(200);

    const client = clientIp();
    const start = (server: ServerProcess, forged: string) =>
      fetch(`${server.url}/widget/v1/chatbots/${bot.id}/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor(server, client, forged) },
        body: '{}',
      });
    const statuses: number[] = [];
    for (let i = 0; i < WIDGET_PER_IP + 2; i++) statuses.push((await start(i % 2 ? byList : byHops, `203.0.113.${i + 1}`)).status);
    expect(statuses).toEqual([...Array(WIDGET_PER_IP).fill(201), 429, 429]);
    await problemOf(await start(byList, '203.0.113.99'));

    const events = await cliJson<Array<{ action: string; ip: string | null }>>(env, 'audit', 'list', '--workspace', tenant.workspaceId);
    const started = events.filter((event) => event.action === 'conversation.created');
    expect(started).toHaveLength(WIDGET_PER_IP);
    expect(started.map((event) => event.ip)).toEqual(Array(WIDGET_PER_IP).fill(client));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliTenant, probeUntil, startServer, type ServerProcess } from '../helpers/processes.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

// Cuts PostgreSQL and, separately, Redis off during traffic through TCP proxies the test controls,
// and checks the 503 / policy behaviour and that the service recovers by itself.

describe('dependency faults', () => {
  const pgUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  let env: Record<string, string>;
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let closedPolicy: ServerProcess;
  let localPolicy: ServerProcess;
  let tenant: { key: string; workspaceId: string };

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) throw new Error('the fault suite needs TEST_DATABASE_URL and TEST_REDIS_URL');
    env = freshDatabaseEnv();
    await cli(env, 'migrate');
    tenant = await cliTenant(env);
    pgProxy = new TcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432));
    redisProxy = new TcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    await Promise.all([pgProxy.start(), redisProxy.start()]);
    const proxied = new URL(pgUrl);
    proxied.port = String(pgProxy.port);
    const base = {
      ...env,
      DATABASE_URL: proxied.toString(),
      REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
    };
    [closedPolicy, localPolicy] = await Promise.all([
      startServer({ ...base, RATE_LIMIT_REDIS_FAILURE: 'closed' }),
      startServer({ ...base, RATE_LIMIT_REDIS_FAILURE: 'local' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([closedPolicy?.stop(), localPolicy?.stop()]);
    await Promise.all([pgProxy?.cut(), redisProxy?.cut()]);
    await dropDatabase(env);
  });

  const post = (server: ServerProcess, i: number) =>
    fetch(`${server.url}/api/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `fault${i}@example.com` }),
    });

  it('answers 503 with Retry-After while PostgreSQL is cut off, reports it in /readyz, and recovers', async () => {
    expect((await post(localPolicy, 0)).status).toBe(201);
    await pgProxy.cut();
    const during = await post(localPolicy, 1);
    expect(during.status).toBe(503);
    expect(during.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await during.json()) as { code: string }).code).toBe('service_unavailable');
    const ready = await fetch(`${localPolicy.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.database).toBe('unreachable');

    await pgProxy.restore();
    const after = await probeUntil(() => post(localPolicy, 2), (r) => r.status === 201);
    expect(after.status).toBe(201);
    expect((await fetch(`${localPolicy.url}/readyz`)).status).toBe(200);
    // Nothing acknowledged was lost: the two acknowledged leads exist, the refused one does not.
    const list = await fetch(`${localPolicy.url}/api/v1/leads?limit=100`, { headers: { authorization: `Bearer ${tenant.key}` } });
    const emails = ((await list.json()) as { data: { email: string }[] }).data.map((lead: { email: string }) => lead.email).sort();
    expect(emails).toEqual(['fault0@example.com', 'fault2@example.com']);
  });

  it('follows the Redis failure policy while Redis is cut off: closed → 503, local → keeps serving; both recover', async () => {
    expect((await fetch(`${closedPolicy.url}/api/v1/chatbots`, { headers: { authorization: `Bearer ${tenant.key}` } })).status).toBe(200);
    await redisProxy.cut();
    const closed = await fetch(`${closedPolicy.url}/api/v1/chatbots`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(closed.status).toBe(503);
    expect(Number(closed.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await fetch(`${closedPolicy.url}/readyz`)).status).toBe(503);

    const local = await fetch(`${localPolicy.url}/api/v1/chatbots`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(local.status).toBe(200);
    expect(local.headers.get('ratelimit')).toMatch(/"key";r=\d+/);
    const localReady = await fetch(`${localPolicy.url}/readyz`);
    expect(localReady.status).toBe(200);
    expect(((await localReady.json()) as { checks: Record<string, string> }).checks.redis).toBe('unreachable');

    await redisProxy.restore();
    const recovered = await probeUntil(
      () => fetch(`${closedPolicy.url}/api/v1/chatbots`, { headers: { authorization: `Bearer ${tenant.key}` } }),
      (r) => r.status === 200,
    );
    expect(recovered.status).toBe(200);
    expect((await probeUntil(() => fetch(`${closedPolicy.url}/readyz`), (r) => r.status === 200)).status).toBe(200);
  });
});

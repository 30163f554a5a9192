import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { testClock, type TestClock } from '../helpers/clock.js';
import { send } from '../helpers/http.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

// The Redis rate-limit store inside the real app (inject): instances whose clocks disagree share budgets
// on Redis's clock, and a Redis that stops answering without closing the connection trips the breaker
// instead of making every request wait. Runs in the PostgreSQL + Redis tier.

const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');

function requireSharedServices(): void {
  if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL and TEST_REDIS_URL');
}

describe('two instances whose clocks differ by 10 minutes, on one Redis', () => {
  const KEY_LIMIT = 10;
  let t: TestApp;
  let ahead: FastifyInstance;
  let tenant: Tenant;

  beforeAll(async () => {
    requireSharedServices();
    const behind = testClock();
    const aheadClock = testClock();
    aheadClock.step(10 * 60_000);
    t = await createTestApp({ rateLimit: { keyPerMinute: KEY_LIMIT, workspacePerMinute: 1000 } }, { clock: behind });
    // The second instance: the same database and Redis, its own (skewed) clock.
    ahead = await buildApp(t.config, { clock: aheadClock });
    await ahead.ready();
    tenant = await t.tenant();
  });
  afterAll(async () => {
    await ahead?.close();
    await t?.close();
  });

  it('spending the same key within its budget on both is never refused, and the budget is shared', async () => {
    expect(t.app.redis).not.toBeNull();
    const statuses: number[] = [];
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i < KEY_LIMIT; i++) {
      last = await send(i % 2 ? ahead : t.app, tenant.key, 'GET', '/api/v1/chatbots');
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual(Array(KEY_LIMIT).fill(200));
    expect(last!.headers.ratelimit).toMatch(/^"key";r=0;t=\d, "workspace";r=\d+;t=0$/);
    // One more on either instance: refused, with the wait of one request (60 s / 10), not the skew.
    for (const app of [t.app, ahead]) {
      const refused = await send(app, tenant.key, 'GET', '/api/v1/chatbots');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(6);
    }
  });
});

describe('Redis that stops answering without closing the connection (circuit breaker)', () => {
  let proxy: TcpProxy;
  const apps: { t: TestApp; clock: TestClock; log: string[] }[] = [];

  /** An app whose Redis is behind the proxy, with a pinned clock (the breaker's time) and its log lines. */
  async function proxiedApp(onFailure: 'closed' | 'local') {
    const clock = testClock(Date.now());
    const log: string[] = [];
    const t = await createTestApp(
      { logLevel: 'info', redis: { url: `redis://127.0.0.1:${proxy.port}`, onFailure }, rateLimit: { keyPerMinute: 1000, workspacePerMinute: 1000 } },
      { clock, logDestination: { write: (line) => void log.push(line) } },
    );
    const app = { t, clock, log, tenant: await t.tenant() };
    apps.push(app);
    return app;
  }
  const breakerLines = (log: string[]) =>
    log.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.msg.startsWith('rate-limit store (Redis)'));

  beforeAll(async () => {
    requireSharedServices();
    proxy = new TcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    await proxy.start();
  });
  afterAll(async () => {
    await Promise.all(apps.map(({ t }) => t.close()));
    await proxy?.cut();
  });

  it('closed: after the first timeout, requests get 503 at once without sending to Redis; a probe per period; recovers after restore', async () => {
    const { tenant, clock, log } = await proxiedApp('closed');
    const call = () => tenant.request('GET', '/api/v1/chatbots');
    expect((await call()).statusCode).toBe(200);

    proxy.stall();
    const first = await call(); // waits out the command timeout: the one request that finds Redis stalled
    expect(first.statusCode).toBe(503);
    expect(Number(first.headers['retry-after'])).toBeGreaterThan(0);
    const sent = proxy.bytesFromClients;
    const during = await Promise.all(Array.from({ length: 20 }, call));
    expect(during.map((r) => r.statusCode)).toEqual(Array(20).fill(503));
    expect(proxy.bytesFromClients).toBe(sent); // the breaker answered: nothing was sent to Redis

    // After the open period one request probes (and fails again); the others still do not send.
    clock.advance(2_000);
    expect((await call()).statusCode).toBe(503);
    const probed = proxy.bytesFromClients;
    expect(probed).toBeGreaterThan(sent);
    for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(503);
    expect(proxy.bytesFromClients).toBe(probed);

    await proxy.restore();
    clock.advance(2_000);
    expect((await call()).statusCode).toBe(200);
    const recovered = await call();
    expect(recovered.statusCode).toBe(200);
    expect(recovered.headers.ratelimit).toMatch(/^"key";r=\d+;t=0/);
    expect(proxy.bytesFromClients).toBeGreaterThan(probed);

    // The transitions are logged once each, not once per request.
    await new Promise((resolve) => setImmediate(resolve));
    const lines = breakerLines(log);
    expect(lines.map((line) => line.level)).toEqual([40, 30]); // warn, then info
    expect(lines[0]!.msg).toContain('"closed" policy');
    expect(lines[1]!.msg).toContain('answers again');
  });

  it('local: after the first timeout, requests are budgeted in process at once, without sending to Redis', async () => {
    const { tenant, clock } = await proxiedApp('local');
    const call = () => tenant.request('GET', '/api/v1/leads');
    expect((await call()).statusCode).toBe(200);

    proxy.stall();
    try {
      expect((await call()).statusCode).toBe(200);
      const sent = proxy.bytesFromClients;
      for (let i = 0; i < 10; i++) {
        const response = await call();
        expect(response.statusCode).toBe(200);
        expect(response.headers.ratelimit).toMatch(/^"key";r=\d+;t=0, "workspace";r=\d+;t=0$/);
      }
      expect(proxy.bytesFromClients).toBe(sent);
    } finally {
      await proxy.restore();
    }
    clock.advance(2_000);
    expect((await call()).statusCode).toBe(200);
  });
});

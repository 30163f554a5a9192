import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../../src/lib/rate-limit/gcra.js';
import { MemoryRateLimitStore } from '../../src/lib/rate-limit/memory-store.js';
import { RedisRateLimitStore } from '../../src/lib/rate-limit/redis-store.js';
import type { Budget, RateLimitStore } from '../../src/lib/rate-limit/types.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem, send, testClock } from './support.js';

const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

interface PolicyState {
  r: number;
  t: number;
}

/** Parses `RateLimit: "key";r=4;t=0, "workspace";r=7;t=0` into {key: {r, t}, workspace: {r, t}}. */
function rateLimit(response: LightMyRequestResponse): Record<'key' | 'workspace', PolicyState> {
  const header = response.headers.ratelimit;
  expect(header, `RateLimit header on ${response.statusCode}`).toMatch(/^"key";r=\d+;t=\d+, "workspace";r=\d+;t=\d+$/);
  const [, kr, kt, wr, wt] = /^"key";r=(\d+);t=(\d+), "workspace";r=(\d+);t=(\d+)$/.exec(String(header))!.map(Number);
  return { key: { r: kr!, t: kt! }, workspace: { r: wr!, t: wt! } };
}

function expectPolicy(response: LightMyRequestResponse, key: number, workspace: number): void {
  expect(response.headers['ratelimit-policy']).toBe(`"key";q=${key};w=60, "workspace";q=${workspace};w=60`);
}

/** Asserts a 429 for exactly the given policies and returns its Retry-After in seconds. */
function expect429(response: LightMyRequestResponse, violated: string[]): number {
  const body = expectProblem(response, 429, 'rate_limited');
  expect(body.type).toBe(QUOTA_EXCEEDED);
  expect(body['violated-policies']).toEqual(violated);
  expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  const retryAfter = Number(response.headers['retry-after']);
  // Retry-After governs and must not point earlier than the RateLimit reset of a violated policy.
  const state = rateLimit(response);
  for (const policy of violated as ('key' | 'workspace')[]) {
    expect(state[policy].r).toBe(0);
    expect(state[policy].t).toBeLessThanOrEqual(retryAfter);
  }
  return retryAfter;
}

/**
 * An app with the given budgets and a frozen, hand-moved clock. The budgets live in process (redis: null)
 * in the Redis run too, so the test clock moves them: Redis keeps its own time (its store is checked
 * below and in test/multi-instance/rate-limit-redis.test.ts).
 */
function limitedApp(keyPerMinute: number, workspacePerMinute: number) {
  const time = testClock('2030-01-01T00:00:00.000Z');
  const ctx = {
    time,
    t: undefined as unknown as TestApp,
    /** Lets time pass until the wall clock reads `ms`. */
    passUntil: (ms: number) => time.advance(ms - time.ms),
  };
  beforeAll(async () => {
    ctx.t = await createTestApp({ rateLimit: { keyPerMinute, workspacePerMinute }, redis: null }, { clock: time });
  });
  afterAll(() => ctx.t.close());
  return ctx;
}

describe('RateLimit headers', () => {
  const ctx = limitedApp(10, 20);

  it('are on every authenticated response, and r falls by one per request for each policy', async () => {
    const tenant = await ctx.t.tenant();
    const reader = await tenant.newKey(['leads:read']);
    const steps: [() => Promise<LightMyRequestResponse>, number, number, number][] = [
      [() => tenant.request('GET', '/api/v1/chatbots'), 200, 9, 19],
      [() => tenant.request('POST', '/api/v1/leads', { email: 'h@example.com' }), 201, 8, 18],
      [() => tenant.request('GET', '/api/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV'), 404, 7, 17],
      [() => tenant.request('POST', '/api/v1/leads', { email: 'bad' }), 400, 6, 16],
      // Another key of the workspace: its own key budget, the shared workspace budget.
      [() => send(ctx.t.app, reader.key, 'GET', '/api/v1/chatbots'), 403, 9, 15],
      [() => send(ctx.t.app, reader.key, 'GET', '/api/v1/leads'), 200, 8, 14],
      [() => tenant.request('GET', '/api/v1/leads'), 200, 5, 13],
    ];
    for (const [request, status, keyLeft, workspaceLeft] of steps) {
      const response = await request();
      expect(response.statusCode, response.body).toBe(status);
      expectPolicy(response, 10, 20);
      expect(rateLimit(response)).toEqual({ key: { r: keyLeft, t: 0 }, workspace: { r: workspaceLeft, t: 0 } });
    }
  });
});

describe('per-key and per-workspace budgets (key 5/min, workspace 8/min)', () => {
  const ctx = limitedApp(5, 8);
  let a: Tenant;
  let b: { id: string; key: string };
  const asB = (url = '/api/v1/leads') => send(ctx.t.app, b.key, 'GET', url);
  beforeAll(async () => {
    a = await ctx.t.tenant();
  });

  it('two keys, each under its own limit, together exceed the workspace limit', async () => {
    b = await a.newKey(['leads:read']);
    for (let i = 0; i < 4; i++) expect((await a.request('GET', '/api/v1/leads')).statusCode).toBe(200);
    for (let i = 0; i < 4; i++) expect((await asB()).statusCode).toBe(200);
    const refusedB = await asB();
    const retryAfter = expect429(refusedB, ['workspace']);
    expectPolicy(refusedB, 5, 8);
    expect(rateLimit(refusedB).key.r).toBe(1);
    // 60 s / 8 = 7.5 s until the workspace budget has room again.
    expect(retryAfter).toBe(8);
    expect429(await a.request('GET', '/api/v1/leads'), ['workspace']);
    // Continuous refill: after 7.5 s exactly one request fits again.
    ctx.time.advance(7_500);
    expect((await asB()).statusCode).toBe(200);
    expect429(await a.request('GET', '/api/v1/leads'), ['workspace']);
    ctx.time.advance(60_000);
  });

  it('one key over its own limit does not spend the workspace budget of the other', async () => {
    const tenant = await ctx.t.tenant();
    const other = await tenant.newKey(['leads:read']);
    for (let i = 0; i < 5; i++) expect((await tenant.request('GET', '/api/v1/leads')).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) {
      const refused = await tenant.request('GET', '/api/v1/leads');
      expect(expect429(refused, ['key'])).toBe(12);
      expect(rateLimit(refused).workspace.r).toBe(3);
    }
    // The workspace has 8 - 5 = 3 requests left, all of them for the other key.
    for (let i = 0; i < 3; i++) expect((await send(ctx.t.app, other.key, 'GET', '/api/v1/leads')).statusCode).toBe(200);
    const refused = await send(ctx.t.app, other.key, 'GET', '/api/v1/leads');
    expect429(refused, ['workspace']);
    expect(rateLimit(refused).key.r).toBe(2);
  });
});

describe('Retry-After is honest (key 7/min: one request per 8.571… s)', () => {
  const ctx = limitedApp(7, 1000);

  async function exhausted(): Promise<{ tenant: Tenant; start: number; retryAfter: number }> {
    const tenant = await ctx.t.tenant();
    const start = ctx.time.ms;
    for (let i = 0; i < 7; i++) expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    const retryAfter = expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key']);
    return { tenant, start, retryAfter };
  }

  it('waiting Retry-After seconds is enough and at most one second too long', async () => {
    const { tenant, start, retryAfter } = await exhausted();
    expect(retryAfter).toBe(9);
    // The true wait w satisfies N-1 < w <= N.
    ctx.passUntil(start + (retryAfter - 1) * 1000);
    expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key']);
    ctx.passUntil(start + retryAfter * 1000);
    expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    ctx.time.advance(120_000);
  });

  it('the wait is exact to the millisecond (60000/7 ms)', async () => {
    const { tenant, start } = await exhausted();
    ctx.passUntil(start + 8_571);
    expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key']);
    ctx.passUntil(start + 8_572);
    expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key']);
    ctx.time.advance(120_000);
  });

  it('a 429 spends nothing: refused requests meanwhile do not push the wait back', async () => {
    const { tenant, start, retryAfter } = await exhausted();
    for (let second = 1; second < retryAfter; second++) {
      ctx.passUntil(start + second * 1000);
      for (let i = 0; i < 3; i++) expect(expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key'])).toBe(retryAfter - second);
    }
    ctx.passUntil(start + retryAfter * 1000);
    const allowed = await tenant.request('GET', '/api/v1/chatbots');
    expect(allowed.statusCode).toBe(200);
    expect(rateLimit(allowed).key.r).toBe(0);
    ctx.time.advance(120_000);
  });
});

describe('several violated budgets (key 2/min, workspace 3/min)', () => {
  const ctx = limitedApp(2, 3);

  it('Retry-After is the longest wait among the violated policies', async () => {
    const tenant = await ctx.t.tenant();
    const other = await tenant.newKey(['chatbots:read']);
    const start = ctx.time.ms;
    for (let i = 0; i < 2; i++) expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    expect((await send(ctx.t.app, other.key, 'GET', '/api/v1/chatbots')).statusCode).toBe(200);
    const refused = await tenant.request('GET', '/api/v1/chatbots');
    // The key waits 30 s (60/2), the workspace 20 s (60/3): the request passes only when both allow it.
    expect(expect429(refused, ['key', 'workspace'])).toBe(30);
    expect(rateLimit(refused)).toEqual({ key: { r: 0, t: 30 }, workspace: { r: 0, t: 20 } });
    ctx.passUntil(start + 20_000);
    expect(expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key'])).toBe(10);
    ctx.passUntil(start + 30_000);
    expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
  });
});

describe('a stepped wall clock (key 5/min, memory store)', () => {
  const ctx = limitedApp(5, 1000);

  it('a key within its budget is not refused after the wall clock steps back 10 minutes, nor after it steps forward', async () => {
    const tenant = await ctx.t.tenant();
    for (let i = 0; i < 2; i++) expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    ctx.time.step(-10 * 60_000);
    const afterBack = await tenant.request('GET', '/api/v1/chatbots');
    expect(afterBack.statusCode, afterBack.body).toBe(200);
    expect(rateLimit(afterBack).key).toEqual({ r: 2, t: 0 });
    ctx.time.step(20 * 60_000);
    const afterForward = await tenant.request('GET', '/api/v1/chatbots');
    expect(afterForward.statusCode, afterForward.body).toBe(200);
    expect(rateLimit(afterForward).key).toEqual({ r: 1, t: 0 });
    ctx.time.advance(60_000);
  });

  it('a wall clock stepped forward 10 minutes does not refill an exhausted budget; time passing does', async () => {
    const tenant = await ctx.t.tenant();
    for (let i = 0; i < 5; i++) expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    expect(expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key'])).toBe(12);
    ctx.time.step(10 * 60_000);
    expect(expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key'])).toBe(12);
    ctx.time.step(-20 * 60_000);
    expect(expect429(await tenant.request('GET', '/api/v1/chatbots'), ['key'])).toBe(12);
    ctx.time.advance(12_000);
    expect((await tenant.request('GET', '/api/v1/chatbots')).statusCode).toBe(200);
    ctx.time.advance(60_000);
  });
});

describe('GCRA decide()', () => {
  const T = 1_000_000;
  const key = (id: string, limit: number): Budget => ({ policy: 'key', id, limit, windowMs: 60_000 });
  const ws = (id: string, limit: number): Budget => ({ policy: 'workspace', id, limit, windowMs: 60_000 });

  it('decide() returns new TATs for every budget when all allow, and none when one refuses', () => {
    const allowed = decide([key('k', 2), ws('w', 10)], [undefined, undefined], T);
    expect(allowed.decision.allowed).toBe(true);
    expect(allowed.next).toEqual([T + 30_000, T + 6_000]);
    expect(allowed.decision.budgets.map((b) => b.remaining)).toEqual([1, 9]);

    const keyFull = decide([key('k', 2), ws('w', 10)], [T + 60_000, T + 6_000], T);
    expect(keyFull.next).toBeNull();
    expect(keyFull.decision).toMatchObject({ allowed: false, violated: ['key'], retryAfterMs: 30_000 });
    // The workspace budget is reported as it was: nothing spent.
    expect(keyFull.decision.budgets.map((b) => b.remaining)).toEqual([0, 9]);

    const workspaceFull = decide([key('k', 2), ws('w', 10)], [undefined, T + 60_000], T);
    expect(workspaceFull.next).toBeNull();
    expect(workspaceFull.decision).toMatchObject({ allowed: false, violated: ['workspace'], retryAfterMs: 6_000 });
    expect(workspaceFull.decision.budgets.map((b) => b.remaining)).toEqual([2, 0]);

    const both = decide([key('k', 2), ws('w', 10)], [T + 60_000, T + 60_000], T);
    expect(both.decision).toMatchObject({ allowed: false, violated: ['key', 'workspace'], retryAfterMs: 30_000 });
  });

  it('decide() refills continuously: a stored TAT in the past counts as a full budget', () => {
    const half = decide([key('k', 4)], [T + 30_000], T);
    expect(half.decision.budgets[0]!.remaining).toBe(1);
    const later = decide([key('k', 4)], [T + 30_000], T + 15_000);
    expect(later.decision.budgets[0]!.remaining).toBe(2);
    const past = decide([key('k', 4)], [T - 5_000], T);
    expect(past.decision.budgets[0]!.remaining).toBe(3);
    expect(past.next).toEqual([T + 15_000]);
  });
});

/** A store under test, on its own budgets: the in-process one, and Redis in the Redis run. */
interface StoreCase {
  name: string;
  open(): Promise<{ store: RateLimitStore; close(): Promise<void> }>;
}

const STORES: StoreCase[] = [
  { name: 'MemoryRateLimitStore', open: async () => ({ store: new MemoryRateLimitStore(() => 1_000_000), close: async () => undefined }) },
];
const redisUrl = process.env.TEST_REDIS_URL;
if (redisUrl) {
  STORES.push({
    name: 'RedisRateLimitStore',
    async open() {
      // Fail-closed, so an unreachable Redis fails these tests instead of falling back to memory.
      const store = new RedisRateLimitStore(redisUrl, 'closed', new MemoryRateLimitStore());
      if (!(await store.waitUntilReady())) throw new Error(`Redis is unreachable at ${redisUrl}`);
      return { store, close: () => store.close() };
    },
  });
}

describe.each(STORES)('$name', ({ open }) => {
  // Hour-long windows: on Redis, whose clock runs on, the budgets do not refill while a test runs.
  const HOUR = 3_600_000;
  const run = Math.random().toString(36).slice(2, 10);
  const key = (id: string, limit: number): Budget => ({ policy: 'key', id: `${run}:${id}`, limit, windowMs: HOUR });
  const ws = (id: string, limit: number): Budget => ({ policy: 'workspace', id: `${run}:${id}`, limit, windowMs: HOUR });
  let store: RateLimitStore;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await open());
  });
  afterAll(() => close());

  it('a refusal by the key budget spends nothing from the workspace budget', async () => {
    expect((await store.consume([key('k1', 1), ws('w', 10)])).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect(await store.consume([key('k1', 1), ws('w', 10)])).toMatchObject({ allowed: false, violated: ['key'] });
    const other = await store.consume([key('k2', 1), ws('w', 10)]);
    expect(other.allowed).toBe(true);
    expect(other.budgets.find((b) => b.policy === 'workspace')!.remaining).toBe(8);
  });

  it('a refusal by the workspace budget spends nothing from the key budget', async () => {
    expect((await store.consume([key('k3', 10), ws('w1', 1)])).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect(await store.consume([key('k4', 10), ws('w1', 1)])).toMatchObject({ allowed: false, violated: ['workspace'] });
    const elsewhere = await store.consume([key('k4', 10), ws('w2', 10)]);
    expect(elsewhere.budgets.find((b) => b.policy === 'key')!.remaining).toBe(9);
  });

  it('concurrent consumers never overspend a budget', async () => {
    const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => store.consume([key(`c${i % 10}`, 3), ws('wc', 10)])));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    const perKey = new Map<string, number>();
    decisions.forEach((d, i) => d.allowed && perKey.set(`c${i % 10}`, (perKey.get(`c${i % 10}`) ?? 0) + 1));
    expect(Math.max(...perKey.values())).toBeLessThanOrEqual(3);
  });

  it('the wait of a refusal is the budget\'s interval (2 per hour: 30 minutes)', async () => {
    for (let i = 0; i < 2; i++) expect((await store.consume([key('r', 2)])).allowed).toBe(true);
    const refused = await store.consume([key('r', 2)]);
    expect(refused).toMatchObject({ allowed: false, violated: ['key'] });
    // Redis's clock runs on between the calls: the wait can only have shrunk, by far less than a minute.
    expect(refused.retryAfterMs).toBeLessThanOrEqual(HOUR / 2);
    expect(refused.retryAfterMs).toBeGreaterThan(HOUR / 2 - 60_000);
    expect(refused.budgets[0]).toMatchObject({ remaining: 0, resetSeconds: Math.ceil(refused.retryAfterMs / 1000) });
  });

  it('peek decides as consume would and spends nothing', async () => {
    const budgets = [key('p', 3), ws('wp', 100)];
    for (let i = 0; i < 5; i++) {
      const peeked = await store.peek(budgets);
      expect(peeked).toMatchObject({ allowed: true, violated: [], retryAfterMs: 0 });
      expect(peeked.budgets.map((b) => b.remaining)).toEqual([3, 100]);
    }
    for (let i = 0; i < 3; i++) expect((await store.consume(budgets)).allowed).toBe(true);
    for (let i = 0; i < 3; i++) {
      const peeked = await store.peek(budgets);
      expect(peeked).toMatchObject({ allowed: false, violated: ['key'] });
      expect(peeked.retryAfterMs).toBeGreaterThan(0);
      expect(peeked.budgets.map((b) => b.remaining)).toEqual([0, 97]);
    }
    // The refused peeks spent nothing from the workspace either.
    expect((await store.consume([key('p2', 3), ws('wp', 100)])).budgets[1]!.remaining).toBe(96);
  });
});

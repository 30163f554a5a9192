import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { generateApiKeySecret } from '../../src/lib/api-key-format.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { expectProblem } from '../helpers/http.js';

// The per-IP budget of failed authentications (FAILED_AUTH_PER_IP_PER_MINUTE): every request from an
// address that does not authenticate spends it, and once it is spent that address gets 429 with
// Retry-After before any lookup, while valid keys from other addresses are served as before. The clock is
// pinned, so the budget does not refill while the test runs: the counts are exact. (The stores' peek and
// consume are held to the same decisions on a real Redis in test/guarantees/rate-limit.test.ts.)

const BUDGET = 120;
const octet = () => 1 + Math.floor(Math.random() * 254);
const address = () => `10.${octet()}.${octet()}.${octet()}`;

describe('failed authentications per client IP', () => {
  const clock = testClock('2030-01-01T00:00:00.000Z');
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    // The in-process store, whose time is the test clock's: Redis keeps its own time, which a test cannot pin.
    t = await createTestApp({ failedAuthPerIpPerMinute: BUDGET, redis: null }, { clock });
    tenant = await t.tenant();
  });
  afterAll(() => t.close());

  const from = (remoteAddress: string, authorization?: string, url = '/api/v1/chatbots') =>
    t.app.inject({ method: 'GET', url, remoteAddress, headers: authorization ? { authorization } : {} });

  it('answers 429 after the budget to 300 well-formed unknown keys from one address, while a valid key elsewhere gets 200', async () => {
    const [storm, valid] = [address(), address()];
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      statuses.push((await from(storm, `Bearer ${generateApiKeySecret()}`)).statusCode);
      if (i % 50 === 0) expect((await from(valid, `Bearer ${tenant.key}`)).statusCode).toBe(200);
    }
    expect(statuses.slice(0, BUDGET)).toEqual(Array(BUDGET).fill(401));
    expect(statuses.slice(BUDGET)).toEqual(Array(300 - BUDGET).fill(429));
    const refused = await from(storm, `Bearer ${generateApiKeySecret()}`);
    const problem = expectProblem(refused, 429, 'rate_limited');
    expect(problem['violated-policies']).toEqual(['failed-auth']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Beyond the budget even a valid key from that address waits: the address is refused before any lookup.
    expectProblem(await from(storm, `Bearer ${tenant.key}`), 429, 'rate_limited');
    expect((await from(valid, `Bearer ${tenant.key}`)).statusCode).toBe(200);
  });

  it('spends the budget on missing, malformed and revoked keys too, and refills with time', async () => {
    const source = address();
    const revoked = await tenant.newKey(['chatbots:read']);
    await t.app.services.apiKeys.revoke(systemContext(tenant.workspaceId, 'test'), revoked.id);
    const kinds = [undefined, 'Bearer not-a-key', `Bearer ${revoked.key}`];
    for (let i = 0; i < BUDGET; i++) expect((await from(source, kinds[i % 3])).statusCode).toBe(401);
    expectProblem(await from(source, undefined), 429, 'rate_limited');
    // A minute later (the monotonic clock moves; the wall clock with it) the budget is whole again.
    clock.advance(60_000);
    expectProblem(await from(source, 'Bearer not-a-key'), 401, 'invalid_api_key');
    expect((await from(source, `Bearer ${tenant.key}`)).statusCode).toBe(200);
  });

  it('authenticates a request whose path id is longer than any id before judging the id (401, never a bare 404)', async () => {
    const long = `/api/v1/chatbots/bot_${'x'.repeat(500)}`;
    expectProblem(await from('198.51.100.2', undefined, long), 401, 'missing_api_key');
    expectProblem(await from('198.51.100.2', `Bearer ${tenant.key}`, long), 404, 'not_found');
  });
});

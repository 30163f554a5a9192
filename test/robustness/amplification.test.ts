import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot, randomIp, startConversation, widget } from '../runtime/support.js';

// Unauthenticated requests must not buy much CPU: per-IP budgets are spent before the body is read, deep
// JSON is refused before it is parsed, a validation problem lists only a few errors, and the routes that
// take small input accept only small bodies.

const SIGN_IN_PER_IP = 3;

function deepArrays(bytes: number): string {
  return '['.repeat(bytes / 2) + ']'.repeat(bytes / 2);
}

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

describe('unauthenticated CPU amplification', () => {
  let t: TestApp;
  let tenant: Tenant;
  let user: DashboardUser;
  let botId: string;

  beforeAll(async () => {
    t = await createTestApp({ signInLimit: { perIpAndEmail: 100, perIp: SIGN_IN_PER_IP } });
    tenant = await t.tenant();
    user = await signUp(t.app);
    botId = (await makeActiveChatbot(tenant)).id;
  });
  afterAll(() => t?.close());

  const post = (url: string, payload: string, remoteAddress = randomIp(), headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, remoteAddress, headers: { 'content-type': 'application/json', ...headers }, payload });

  it('refuses a 1 MB [[[[…]]]] body with 400 invalid_request, before parsing it', async () => {
    const started = performance.now();
    const response = await tenant.request('POST', '/api/v1/leads', deepArrays(1_000_000));
    const elapsed = performance.now() - started;
    const problem = expectProblem(response, 400, 'invalid_request');
    expect(problem.detail).toMatch(/nested deeper than 32/);
    // Today's cost was 1–3 s of CPU (issue 29); refusing it from a scan of the text is far below that.
    expect(elapsed).toBeLessThan(1000);
    // The same refusal on an unauthenticated route.
    expectProblem(await post('/app/api/invitations/lookup', deepArrays(10_000)), 400, 'invalid_request');
  });

  it('counts nesting outside strings only, and allows 32 levels', async () => {
    expect(expectProblem(await tenant.request('POST', '/api/v1/leads', nested(33)), 400, 'invalid_request').detail).toMatch(/nested deeper than 32/);
    // 32 levels are parsed and reach validation (the field is unknown).
    expectProblem(await tenant.request('POST', '/api/v1/leads', nested(32)), 400, 'validation_failed');
    const brackets = `[{"\\"${'['.repeat(60)}`;
    const created = await tenant.request('POST', '/api/v1/leads', JSON.stringify({ email: 'deep@example.com', name: brackets.slice(0, 64) }));
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().name).toBe(brackets.slice(0, 64));
  });

  it('answers 80,000 unknown keys with a small problem listing a few errors', async () => {
    const body = `{${Array.from({ length: 80_000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    const response = await tenant.request('POST', '/api/v1/chatbots', body);
    const problem = expectProblem(response, 400, 'validation_failed');
    expect(problem.errors!.length).toBeGreaterThan(0);
    expect(problem.errors!.length).toBeLessThanOrEqual(10);
    expect(response.body.length).toBeLessThan(4096);
    // The unauthenticated sign-up gets the same short answer (its body limit keeps the key count small anyway).
    const signup = await post('/app/api/signup', `{${Array.from({ length: 1000 }, (_, i) => `"k${i}":0`).join(',')}}`);
    expect(expectProblem(signup, 400, 'validation_failed').errors!.length).toBeLessThanOrEqual(10);
  });

  it.each([
    ['/app/api/signin'],
    ['/app/api/signup'],
    ['/app/api/invitations/lookup'],
  ])('%s refuses a 100 KB body with 413', async (url) => {
    const payload = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(100_000) });
    expectProblem(await post(url, payload), 413, 'payload_too_large');
  });

  it('invitation accept and the widget routes refuse bodies far above what they take with 413', async () => {
    const big = JSON.stringify({ token: 'x'.repeat(100_000) });
    expectProblem(await user.request('POST', '/app/api/invitations/accept', JSON.parse(big)), 413, 'payload_too_large');
    expectProblem(await widget(t.app, 'POST', `/widget/v1/chatbots/${botId}/conversations`, { body: { visitor: { name: 'x'.repeat(100_000) } } }), 413, 'payload_too_large');
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, botId);
    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${id}/lead`, { token, body: { name: 'x'.repeat(100_000) } }), 413, 'payload_too_large');
    expectProblem(await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'x'.repeat(100_000) } }), 413, 'payload_too_large');
    // The longest message a visitor may send still fits, in any script and even fully escaped.
    const longest = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: '語'.repeat(10_000) } });
    expect(longest.statusCode, longest.body).toBe(201);
    const escaped = await t.app.inject({
      method: 'POST',
      url: `/widget/v1/conversations/${id}/messages`,
      remoteAddress: randomIp(),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: `{"content":"${'\\u8a9e'.repeat(10_000)}"}`,
    });
    expect(escaped.statusCode, escaped.body).toBe(201);
  });

  it.each([
    ['/app/api/signin'],
    ['/app/api/signup'],
    ['/app/api/invitations/lookup'],
  ])('%s spends the per-IP budget before the body is read: refused bodies count, then 429 without parsing', async (url) => {
    const ip = randomIp();
    const statuses: number[] = [];
    statuses.push((await post(url, '{not json', ip)).statusCode);
    statuses.push((await post(url, deepArrays(10_000), ip)).statusCode);
    statuses.push((await post(url, JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(100_000) }), ip)).statusCode);
    expect(statuses).toEqual([400, 400, 413]);
    // The budget is spent: neither a malformed body nor a well-formed one is parsed any more.
    const refused = await post(url, '{not json', ip);
    expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expectProblem(await post(url, JSON.stringify({ email: user.email, password: user.password, token: 'x' }), ip), 429, 'rate_limited');
    // Another address still has its budget.
    expect((await post(url, '{not json')).statusCode).toBe(400);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';

// TRUST_PROXY names the proxies in front of the service (a hop count or their addresses); the client IP is
// the right-most X-Forwarded-For address that they did not add, never a client-chosen leftmost entry.
describe('TRUST_PROXY configuration', () => {
  it('is off by default and with false or 0', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it('takes a number of proxy hops', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: ' 2 ' }).trustProxy).toBe(2);
  });

  it('takes a comma-separated list of proxy addresses and CIDRs', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    expect(loadConfig({ TRUST_PROXY: 'loopback,uniquelocal' }).trustProxy).toEqual(['loopback', 'uniquelocal']);
  });

  it.each([
    ['true', /TRUST_PROXY=true is no longer accepted.*number of proxies.*addresses/],
    ['yes', /TRUST_PROXY=yes is no longer accepted/],
    ['10.0.0.0/33', /TRUST_PROXY.*"10\.0\.0\.0\/33"/],
    ['proxy.example.com', /TRUST_PROXY.*"proxy\.example\.com"/],
    ['1,2', /TRUST_PROXY.*"1"/],
    ['-1', /TRUST_PROXY.*"-1"/],
  ])('refuses TRUST_PROXY=%s with a message naming the accepted forms', (raw, message) => {
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(message);
  });
});

function clientIp(): string {
  const octet = () => 1 + Math.floor(Math.random() * 254);
  return `198.18.${octet()}.${octet()}`;
}

// The socket peer is a proxy at 10.1.2.3; an edge proxy at 10.9.9.9 appended the client's address, and the
// client wrote its own leftmost entries. Both forms name the same two proxies.
describe.each([
  ['a list of proxy CIDRs', '10.0.0.0/8'],
  ['a hop count', '2'],
])('client IP behind trusted proxies given as %s (inject)', (_form, setting) => {
  let t: TestApp;
  beforeAll(async () => {
    const { trustProxy } = loadConfig({ TRUST_PROXY: setting });
    t = await createTestApp({ trustProxy, signInLimit: { perIpAndEmail: 100, perIp: 3 } });
  });
  afterAll(() => t?.close());

  const signIn = (forwardedFor: string) =>
    t.app.inject({
      method: 'POST',
      url: '/app/api/signin',
      remoteAddress: '10.1.2.3',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      payload: JSON.stringify({ email: `nobody+${Math.random().toString(36).slice(2)}@example.com`, password: 'not the password' }),
    });

  it('a client-chosen leftmost X-Forwarded-For entry does not give a fresh sign-in budget', async () => {
    // Client addresses of this run's own (on the PostgreSQL + Redis run, budgets live in a shared Redis).
    const [client, other] = [clientIp(), clientIp()];
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await signIn(`203.0.113.${i + 1}, ${client}, 10.9.9.9`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expectProblem(await signIn(`203.0.113.77, ${client}, 10.9.9.9`), 429, 'rate_limited');
    // Another client behind the same proxies has its own budget.
    expect((await signIn(`203.0.113.1, ${other}, 10.9.9.9`)).statusCode).toBe(401);
  });
});

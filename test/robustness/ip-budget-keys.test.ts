import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetKeyOf } from '../../src/http/client-ip.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot } from '../runtime/support.js';

// Every per-address budget (the widget's requests per IP, failed authentications, sign-in) and the stream
// limits key an address by budgetKeyOf: IPv4 as it is (IPv4-mapped IPv6 included), IPv6 by its /64, since
// one subscriber may use any address of its /64.

/** A /64 of the documentation range that no other run (sharing Redis) uses, as host number → address in it. */
function fresh64(): (host: number) => string {
  const group = () => Math.floor(Math.random() * 0xffff).toString(16);
  const net = `2001:db8:${group()}:${group()}`;
  return (host) => `${net}::${host.toString(16)}`;
}

function freshIpv4(): string {
  const octet = () => 1 + Math.floor(Math.random() * 254);
  return `198.18.${octet()}.${octet()}`;
}

describe('budgetKeyOf', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:CB00:7109', '203.0.113.9'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0:0:0:7', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', 'not an address'],
    [undefined, 'unknown'],
  ])('%s → %s', (ip, key) => {
    expect(budgetKeyOf(ip)).toBe(key);
  });

  it('keeps different /64s apart', () => {
    expect(budgetKeyOf('2001:db8:1:2::1')).not.toBe(budgetKeyOf('2001:db8:1:3::1'));
    expect(budgetKeyOf('2001:db8:1:2::1')).not.toBe(budgetKeyOf('2001:db9:1:2::1'));
  });
});

describe('per-address budgets group IPv6 by /64', () => {
  const BUDGET = 3;
  let t: TestApp;
  let chatbotId: string;

  beforeAll(async () => {
    t = await createTestApp({
      widget: { ratePerIpPerMinute: BUDGET, messagesPerConversationPerMinute: 100 },
      failedAuthPerIpPerMinute: BUDGET,
      signInLimit: { perIp: BUDGET, perIpAndEmail: 100 },
    });
    chatbotId = (await makeActiveChatbot(await t.tenant(), { name: 'Budgeted agent' })).id;
  });
  afterAll(() => t.close());

  it('the widget\'s requests per IP: neighbours in a /64 share one budget, the next /64 has its own', async () => {
    const address = fresh64();
    const look = (remoteAddress: string) => t.app.inject({ method: 'GET', url: `/widget/v1/chatbots/${chatbotId}`, remoteAddress });
    for (let host = 1; host <= BUDGET; host++) expect((await look(address(host))).statusCode).toBe(200);
    const refused = expectProblem(await look(address(0xbeef)), 429, 'rate_limited');
    expect(refused['violated-policies']).toEqual(['ip']);
    expect((await look(fresh64()(1))).statusCode).toBe(200);
  });

  it('the widget\'s requests per IP: an IPv4 address and its IPv4-mapped form share one budget', async () => {
    const ipv4 = freshIpv4();
    const look = (remoteAddress: string) => t.app.inject({ method: 'GET', url: `/widget/v1/chatbots/${chatbotId}`, remoteAddress });
    expect((await look(ipv4)).statusCode).toBe(200);
    expect((await look(`::ffff:${ipv4}`)).statusCode).toBe(200);
    expect((await look(ipv4)).statusCode).toBe(200);
    expectProblem(await look(`::ffff:${ipv4}`), 429, 'rate_limited');
  });

  it('failed authentications: a /64 spreading bad keys over its addresses is refused as one client', async () => {
    const address = fresh64();
    const unauthenticated = (remoteAddress: string) => t.app.inject({ method: 'GET', url: '/api/v1/chatbots', remoteAddress, headers: { authorization: 'Bearer not-a-key' } });
    for (let host = 1; host <= BUDGET; host++) expectProblem(await unauthenticated(address(host)), 401, 'invalid_api_key');
    const refused = expectProblem(await unauthenticated(address(0x1234)), 429, 'rate_limited');
    expect(refused['violated-policies']).toEqual(['failed-auth']);
    expectProblem(await unauthenticated(fresh64()(1)), 401, 'invalid_api_key');
  });

  it('sign-in per IP: a /64 is one client', async () => {
    const address = fresh64();
    const signIn = (remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/app/api/signin', remoteAddress, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password here' }) });
    for (let host = 1; host <= BUDGET; host++) expectProblem(await signIn(address(host)), 401, 'invalid_credentials');
    expectProblem(await signIn(address(0xfeed)), 429, 'rate_limited');
    expectProblem(await signIn(fresh64()(1)), 401, 'invalid_credentials');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';

// A `sid` cookie that is not valid percent-encoding (a browser extension, a proxy, a hand-made header) is
// no session at all: public routes work, the others answer 401 not_signed_in, never 500.
describe('a malformed sid cookie', () => {
  let t: TestApp;
  let user: DashboardUser;
  const MALFORMED = 'sid=%E0%A4%A';

  beforeAll(async () => {
    t = await createTestApp();
    user = await signUp(t.app);
  });
  afterAll(() => t?.close());

  it('does not stop sign-in', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/app/api/signin',
      headers: { 'content-type': 'application/json', cookie: MALFORMED },
      payload: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(String(response.headers['set-cookie'])).toMatch(/^sid=[^;%]+;/);
  });

  it.each([
    ['GET', '/app/api/session'],
    ['GET', '/app/api/chatbots'],
    ['GET', '/app/api/audit'],
  ])('%s %s answers 401 not_signed_in', async (method, url) => {
    expectProblem(await t.app.inject({ method: method as 'GET', url, headers: { cookie: MALFORMED } }), 401, 'not_signed_in');
  });

  it('is ignored beside other cookies, and a valid session in the same header still counts', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/app/api/session', headers: { cookie: `theme=dark; ${MALFORMED}; lang=en` } }), 401, 'not_signed_in');
    const ok = await t.app.inject({ method: 'GET', url: '/app/api/session', headers: { cookie: `other=%E0%A4%A; ${user.cookie}` } });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem, send } from './support.js';

// A method the route table does not have on a path it knows answers 405 with Allow (RFC 9110 §15.5.6),
// as a problem with code `method_not_allowed`; a path it does not know stays 404.

let t: TestApp;
let tenant: Tenant;
let botId: string;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  botId = (await makeChatbot(tenant)).id;
});
afterAll(() => t.close());

/** The methods of an Allow header, sorted. */
function allowed(value: unknown): string[] {
  return String(value ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .sort();
}

describe('/api/v1', () => {
  it('DELETE /chatbots/{id} is 405 method_not_allowed with Allow: GET, HEAD, PATCH', async () => {
    const res = await tenant.request('DELETE', `/api/v1/chatbots/${botId}`);
    const problem = expectProblem(res, 405, 'method_not_allowed');
    expect(allowed(res.headers.allow)).toEqual(['GET', 'HEAD', 'PATCH']);
    expect(problem.detail).toContain('DELETE');
    // The agent is untouched.
    expect((await tenant.request('GET', `/api/v1/chatbots/${botId}`)).statusCode).toBe(200);
  });

  it('names the methods of each path: PUT /leads, DELETE /conversations/{id}/messages, POST /analytics', async () => {
    const cases: [string, string, string[]][] = [
      ['PUT', '/api/v1/leads', ['GET', 'HEAD', 'POST']],
      ['DELETE', '/api/v1/conversations/conv_01ARZ3NDEKTSV4RRFFQ69G5FAV/messages', ['GET', 'HEAD', 'POST']],
      ['POST', '/api/v1/analytics', ['GET', 'HEAD']],
      ['PATCH', '/api/v1/conversations/conv_01ARZ3NDEKTSV4RRFFQ69G5FAV', ['GET', 'HEAD']],
    ];
    for (const [method, url, methods] of cases) {
      const res = await tenant.request(method, url, method === 'DELETE' ? undefined : {});
      expectProblem(res, 405, 'method_not_allowed');
      expect(allowed(res.headers.allow), `${method} ${url}`).toEqual(methods);
    }
  });

  it('does not need a key: the route table is public in the OpenAPI document', async () => {
    const res = await send(t.app, null, 'DELETE', `/api/v1/chatbots/${botId}`);
    expectProblem(res, 405, 'method_not_allowed');
    expect(allowed(res.headers.allow)).toEqual(['GET', 'HEAD', 'PATCH']);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('every method named in Allow is answered by a route (not 405)', async () => {
    const res = await tenant.request('DELETE', `/api/v1/leads`);
    for (const method of allowed(res.headers.allow)) {
      const answer = await tenant.request(method, '/api/v1/leads', method === 'POST' ? { email: 'allow@example.com' } : undefined);
      expect(answer.statusCode, method).not.toBe(405);
    }
  });

  it('an unknown path is still 404 not_found, whatever the method', async () => {
    for (const method of ['GET', 'DELETE', 'POST']) {
      const res = await tenant.request(method, '/api/v1/nothing-here', method === 'POST' ? {} : undefined);
      expectProblem(res, 404, 'not_found');
      expect(res.headers.allow).toBeUndefined();
    }
  });
});

describe('/app/api and /widget/v1', () => {
  it('answer 405 with Allow the same way', async () => {
    const dashboard = await send(t.app, null, 'DELETE', '/app/api/chatbots/bot_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expectProblem(dashboard, 405, 'method_not_allowed');
    expect(allowed(dashboard.headers.allow)).toEqual(['GET', 'HEAD', 'PATCH']);
    const widget = await send(t.app, null, 'GET', '/widget/v1/chatbots/bot_01ARZ3NDEKTSV4RRFFQ69G5FAV/conversations');
    expectProblem(widget, 405, 'method_not_allowed');
    expect(allowed(widget.headers.allow)).toEqual(['OPTIONS', 'POST']);
  });
});

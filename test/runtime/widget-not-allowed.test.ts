import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot, startConversation, widget } from './support.js';

// Issue 33 §4: a widget on a site that is not allowed must be able to read the refusal (so it can say "not
// enabled on this website" rather than "offline"): the preflight is answered, and the 403 names the origin.

describe('widget on a site that is not allowed', () => {
  let t: TestApp;
  let tenant: Tenant;
  let botId: string;
  const allowed = 'https://shop.example.com';
  const other = 'https://elsewhere.example.org';

  beforeAll(async () => {
    t = await createTestApp({ publicUrl: 'https://chat.example.net' });
    tenant = await t.tenant();
    botId = (await makeActiveChatbot(tenant, { allowed_origins: [allowed] })).id;
  });
  afterAll(async () => t.close());

  it('answers the preflight from any origin (204, naming it), so the request that follows can be read', async () => {
    for (const url of [`/widget/v1/chatbots/${botId}`, `/widget/v1/chatbots/${botId}/conversations`]) {
      const preflight = await widget(t.app, 'OPTIONS', url, { origin: other, headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(other);
      expect(preflight.headers.vary).toContain('Origin');
      expect(preflight.headers['access-control-allow-methods']).toMatch(/POST/);
    }
  });

  it('refuses the config, a new conversation and a conversation\'s routes with a readable 403 origin_not_allowed and no data', async () => {
    const config = await widget(t.app, 'GET', `/widget/v1/chatbots/${botId}`, { origin: other });
    const problem = expectProblem(config, 403, 'origin_not_allowed');
    expect(config.headers['access-control-allow-origin']).toBe(other);
    expect(config.headers['access-control-expose-headers']).toMatch(/Request-Id/);
    expect(problem.detail).toContain(other);
    expect(Object.keys(problem).sort()).toEqual(['code', 'detail', 'instance', 'request_id', 'status', 'title', 'type']);

    const start = await widget(t.app, 'POST', `/widget/v1/chatbots/${botId}/conversations`, { origin: other, body: {} });
    expectProblem(start, 403, 'origin_not_allowed');
    expect(start.headers['access-control-allow-origin']).toBe(other);
    expect(start.body).not.toMatch(/vtk_|conv_/);

    const started = await startConversation(t.app, botId);
    const send = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { origin: other, token: started.visitor_token, body: { content: 'hi' } });
    expectProblem(send, 403, 'origin_not_allowed');
    expect(send.headers['access-control-allow-origin']).toBe(other);
    const read = await widget(t.app, 'GET', `/widget/v1/conversations/${started.conversation_id}/messages`, { origin: other, token: started.visitor_token });
    expectProblem(read, 403, 'origin_not_allowed');
    expect(read.body).not.toContain('"data"');
    // Nothing was stored for the refused site.
    expect((await tenant.request('GET', `/api/v1/conversations/${started.conversation_id}/messages`)).json().data).toEqual([]);
  });

  it('still serves the allowed site and pages without an Origin', async () => {
    const config = await widget(t.app, 'GET', `/widget/v1/chatbots/${botId}`, { origin: allowed });
    expect(config.statusCode).toBe(200);
    expect(config.headers['access-control-allow-origin']).toBe(allowed);
    expect((await widget(t.app, 'GET', `/widget/v1/chatbots/${botId}`)).statusCode).toBe(200);
    const start = await widget(t.app, 'POST', `/widget/v1/chatbots/${botId}/conversations`, { origin: allowed, body: {} });
    expect(start.statusCode).toBe(201);
  });
});

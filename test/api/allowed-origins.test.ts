import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem, must } from './support.js';

// Issue 33 §3: allowed origins are normalized when written (case, trailing slash, default port, duplicates)
// and a wrong one is explained in words, not with a regular expression.

type Bot = { id: string; allowed_origins: string[] };

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
});
afterAll(() => t.close());

describe('allowed_origins', () => {
  it('normalizes case, a trailing slash and the default port, and collapses duplicates, on create and update', async () => {
    const bot = (await makeChatbot(tenant, {
      allowed_origins: ['https://www.Example.co.uk:443/', 'HTTPS://WWW.EXAMPLE.CO.UK', 'http://Shop.example.com:80', 'http://localhost:5173/', ' https://a.example ', '*'],
    })) as Bot;
    expect(bot.allowed_origins).toEqual(['https://www.example.co.uk', 'http://shop.example.com', 'http://localhost:5173', 'https://a.example', '*']);
    const stored = await t.app.database.db.selectFrom('chatbots').select('allowed_origins').where('id', '=', bot.id).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.allowed_origins)).toEqual(bot.allowed_origins);

    const patched = await must<Bot>(tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { allowed_origins: ['https://b.example:8443/', 'https://b.example:8443', 'https://bücher.example'] }), 200);
    expect(patched.allowed_origins).toEqual(['https://b.example:8443', 'https://xn--bcher-kva.example']);
  });

  it('refuses a path, query, fragment, credentials or another scheme in words, naming the entry', async () => {
    const bot = (await makeChatbot(tenant, { allowed_origins: ['https://keep.example'] })) as Bot;
    for (const wrong of ['https://www.example.com/shop', 'https://www.example.com/?a=1', 'https://www.example.com#top', 'https://user:pw@example.com', 'ftp://example.com', 'example.com', 'https://', 'https://example.com:99999']) {
      const problem = expectProblem(await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { allowed_origins: ['https://ok.example', wrong] }), 400, 'validation_failed');
      const words = `allowed_origins[1] must be an origin such as https://www.example.com (scheme and host, no path): got "${wrong}"`;
      expect(problem.detail).toBe(`${words}.`);
      expect(problem.errors).toEqual([{ pointer: '/allowed_origins/1', message: words }]);
      expect(JSON.stringify(problem)).not.toMatch(/pattern|\^\(/);
    }
    const created = expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'A', allowed_origins: ['https://shop.example/'.concat('path')] }), 400, 'validation_failed');
    expect(created.detail).toContain('allowed_origins[0] must be an origin such as https://www.example.com');
    expect((await must<Bot>(tenant.request('GET', `/api/v1/chatbots/${bot.id}`), 200)).allowed_origins).toEqual(['https://keep.example']);
  });

  it('the widget matches the Origin against normalized entries, also for rows stored before normalization', async () => {
    const bot = (await makeChatbot(tenant, { name: 'Shop', instructions: 'Help.' })) as Bot;
    await must(tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' }), 200);
    // A row written before this change, as it was typed.
    await t.app.database.db.updateTable('chatbots').set({ allowed_origins: JSON.stringify(['https://Shop.Example.com:443/']) }).where('id', '=', bot.id).execute();
    const start = (origin: string) => t.app.inject({ method: 'POST', url: `/widget/v1/chatbots/${bot.id}/conversations`, headers: { origin, 'content-type': 'application/json' }, payload: '{}' });
    const allowed = await start('https://shop.example.com');
    expect(allowed.statusCode, allowed.body).toBe(201);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://shop.example.com');
    expectProblem(await start('https://shop.example.com:8443'), 403, 'origin_not_allowed');
    expectProblem(await start('http://shop.example.com'), 403, 'origin_not_allowed');
  });
});

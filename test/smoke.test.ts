import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('creates and reads a chatbot', async () => {
    const tenant = await t.tenant();
    const created = await tenant.request('POST', '/api/v1/chatbots', { name: 'Bot' });
    expect(created.statusCode).toBe(201);
    const got = await tenant.request('GET', `/api/v1/chatbots/${created.json().id}`);
    expect(got.json().status).toBe('draft');
  });
});

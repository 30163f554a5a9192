import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';

// Validation problems name each bad field once, with the reason that applies to it.
describe('validation messages', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
  });
  afterAll(() => t.close());

  it('reports a wrong type in a nullable field once, as the type it must have', async () => {
    const problem = expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'x', description: 5, temperature: 'hot' }), 400, 'validation_failed');
    expect(problem.errors).toEqual([
      { pointer: '/description', message: 'must be string' },
      { pointer: '/temperature', message: 'must be number' },
    ]);
  });

  it('reports an unknown field and a missing one by pointer', async () => {
    const problem = expectProblem(await tenant.request('POST', '/api/v1/chatbots', { nickname: 'x' }), 400, 'validation_failed');
    expect(problem.errors).toEqual(
      expect.arrayContaining([
        { pointer: '/nickname', message: 'unknown field' },
        { pointer: '/name', message: 'is required' },
      ]),
    );
  });
});

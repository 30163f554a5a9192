import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';

// Two server processes on one database: two on one SQLite file (a second server started by mistake, or
// the CLI beside the server), or two instances on one PostgreSQL. The same Idempotency-Key sent to both at
// once executes the request once: every answer is the original 201, its replay, or a 409 with Retry-After.

describe('one Idempotency-Key sent concurrently to two processes on one database', () => {
  let env: Record<string, string>;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    env = { ...freshDatabaseEnv(), RATE_LIMIT_KEY_PER_MINUTE: '1000000', RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000' };
    const migrated = await cli(env, 'migrate'); // once, before the processes start
    expect(migrated.code, migrated.stderr).toBe(0);
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await dropDatabase(env);
  });

  it('creates one lead, and every answer is that lead, its replay, or 409 with Retry-After', { timeout: 60_000 }, async () => {
    const { key } = await cliTenant(env);
    const post = (server: ServerProcess, idempotencyKey: string, email: string) =>
      fetch(`${server.url}/api/v1/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify({ email }),
      });
    for (let round = 0; round < 5; round++) {
      const idempotencyKey = `two-processes-${round}`;
      const email = `once-${round}@example.com`;
      const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => post(i % 2 ? a : b, idempotencyKey, email)));
      const bodies = await Promise.all(responses.map((r) => r.text()));
      const originals = responses.flatMap((r, i) => (r.status === 201 && r.headers.get('idempotent-replayed') === null ? [bodies[i]!] : []));
      expect(originals, `round ${round}`).toHaveLength(1);
      responses.forEach((response, i) => {
        if (response.status === 201) expect(bodies[i]).toBe(originals[0]);
        else {
          expect(response.status, bodies[i]).toBe(409);
          expect((JSON.parse(bodies[i]!) as { code: string }).code).toBe('idempotency_key_in_use');
          expect(response.headers.get('retry-after')).toBe('1');
        }
      });
      const leads = await fetch(`${a.url}/api/v1/leads?email=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await leads.json()) as { data: unknown[] }).data).toHaveLength(1);
    }
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliTenant, probeUntil, startServer, type ServerProcess } from '../helpers/processes.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

// A PostgreSQL that stops answering without closing anything (the proxy keeps every connection and
// forwards nothing): every query is bounded by the client-side query timeout, so requests answer 503
// instead of hanging for the whole outage, /readyz answers 503 within 2 s, and the service recovers by
// itself when traffic flows again. Runs in the PostgreSQL + Redis tier.

const QUERY_TIMEOUT_MS = 1500;
const CONNECT_TIMEOUT_MS = 1000;

/** Runs `request` and returns its response with how long it took; aborts after `limitMs` (a hang). */
async function timed(request: (signal: AbortSignal) => Promise<Response>, limitMs: number): Promise<{ response: Response; ms: number }> {
  const started = Date.now();
  const response = await request(AbortSignal.timeout(limitMs));
  return { response, ms: Date.now() - started };
}

describe('a stalled PostgreSQL', () => {
  const pgUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  let env: Record<string, string>;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let tenant: { key: string; workspaceId: string };

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) throw new Error('the fault suite needs TEST_DATABASE_URL and TEST_REDIS_URL');
    env = freshDatabaseEnv();
    await cli(env, 'migrate');
    tenant = await cliTenant(env);
    proxy = new TcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432));
    await proxy.start();
    const proxied = new URL(pgUrl);
    proxied.port = String(proxy.port);
    server = await startServer({
      ...env,
      DATABASE_URL: proxied.toString(),
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: '1000',
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    });
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await proxy?.cut();
    await dropDatabase(env);
  });

  const post = (email: string, signal?: AbortSignal) =>
    fetch(`${server.url}/api/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
      signal,
    });

  it('answers 503 within the query timeout while the database hangs, /readyz 503 within 2 s, and recovers', async () => {
    expect((await post('before@example.com')).status).toBe(201);
    proxy.stall();
    try {
      // A hang shows up as an abort after 10 s: far beyond any bound the service should keep.
      const ready = await timed((signal) => fetch(`${server.url}/readyz`, { signal }), 10_000);
      expect(ready.response.status).toBe(503);
      expect(ready.ms).toBeLessThan(2000);
      expect(((await ready.response.json()) as { checks: Record<string, string> }).checks.database).toBe('unreachable');

      const during = await timed((signal) => post('during@example.com', signal), 10_000);
      expect(during.response.status).toBe(503);
      expect(Number(during.response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await during.response.json()) as { code: string }).code).toBe('service_unavailable');
      // At most one wait for a connection and one query timeout (a fresh connection may be opened).
      expect(during.ms).toBeLessThan(CONNECT_TIMEOUT_MS + QUERY_TIMEOUT_MS + 1000);

      const list = await timed((signal) => fetch(`${server.url}/api/v1/leads`, { headers: { authorization: `Bearer ${tenant.key}` }, signal }), 10_000);
      expect(list.response.status).toBe(503);
    } finally {
      await proxy.restore();
    }

    const after = await probeUntil(() => post('after@example.com'), (r) => r.status === 201);
    expect(after.status).toBe(201);
    expect((await probeUntil(() => fetch(`${server.url}/readyz`), (r) => r.status === 200)).status).toBe(200);
    // What was acknowledged is there; the write answered 503 is not (its transaction was rolled back).
    const leads = await fetch(`${server.url}/api/v1/leads?limit=100`, { headers: { authorization: `Bearer ${tenant.key}` } });
    const emails = ((await leads.json()) as { data: { email: string }[] }).data.map((lead) => lead.email).sort();
    expect(emails).toEqual(['after@example.com', 'before@example.com']);
  });

  it('closes a connection whose answer never came: the transaction it had open is not reused by the next request', async () => {
    // Another session (not through the proxy) holds the workspace row against the audit chain's update, so
    // the write waits inside its transaction (its lead row already inserted) when the network stalls.
    const session = () => new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, options: `-c search_path=${env.DATABASE_SCHEMA}` });
    const holder = session();
    // Outside any transaction: within one, PostgreSQL keeps showing the same pg_stat_activity snapshot.
    const observer = session();
    await Promise.all([holder.connect(), observer.connect()]);
    let response: Response;
    try {
      await holder.query('begin');
      await holder.query('select id from workspaces where id = $1 for no key update', [tenant.workspaceId]);
      const pending = post('cut-off@example.com');
      const lockWaits = async () =>
        (await observer.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].n as number;
      expect(await probeUntil(lockWaits, (n) => n > 0)).toBeGreaterThan(0);
      proxy.stall();
      // The update now goes through in PostgreSQL, but its answer never reaches the service.
      await holder.query('rollback');
      response = await pending;
    } finally {
      await proxy.restore();
      await Promise.all([holder.end(), observer.end()]);
    }
    expect(response.status).toBe(503);

    const next = await probeUntil(() => post('next@example.com'), (r) => r.status === 201);
    expect(next.status).toBe(201);
    const leads = await fetch(`${server.url}/api/v1/leads?limit=100`, { headers: { authorization: `Bearer ${tenant.key}` } });
    const emails = ((await leads.json()) as { data: { email: string }[] }).data.map((lead) => lead.email);
    expect(emails).toContain('next@example.com');
    expect(emails).not.toContain('cut-off@example.com');
    const verify = await cli(env, 'audit', 'verify', '--workspace', tenant.workspaceId);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { testConfig } from '../helpers/app.js';
import { dropDatabase } from '../helpers/database.js';
import { cliTenant, probeUntil, startServer, type ServerProcess } from '../helpers/processes.js';
import { startReceiver, verified, type Receiver } from './support.js';

// Issue 32 acceptance: "a server killed with SIGKILL mid-delivery delivers after restart". The delivery is
// a row claimed with a lease; the killed process never records its outcome, the lease lapses, and the
// restarted server claims it again: the receiver gets the same webhook-id a second time, and answers it.

describe('a webhook delivery interrupted by SIGKILL', () => {
  const servers: ServerProcess[] = [];
  let receiver: Receiver | null = null;
  const config = testConfig();
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await receiver?.close();
    await dropDatabase(config.databaseEnv);
  });

  it('is delivered after restart, with the same webhook-id', { timeout: 120_000 }, async () => {
    const env = {
      ...config.databaseEnv,
      OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true',
      WEBHOOK_TIMEOUT_MS: '2000',
      REPLY_LEASE_MS: '1000',
      REPLY_POLL_INTERVAL_MS: '100',
    };
    const { key } = await cliTenant(config.databaseEnv);
    // The first request is held open (the server is killed while it waits); later ones are answered.
    receiver = await startReceiver((_request, index) => (index === 0 ? 'hang' : { status: 200 }));
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    const first = await startServer(env);
    servers.push(first);
    const created = await fetch(`${first.url}/api/v1/webhook_endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, events: ['lead.created'] }) });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { id: string; secret: string };
    const lead = await fetch(`${first.url}/api/v1/leads`, { method: 'POST', headers, body: JSON.stringify({ email: 'kill@example.com' }) });
    expect(lead.status).toBe(201); // acknowledged: its event and delivery are committed

    const [inFlight] = await receiver.waitFor(1);
    process.kill(first.child.pid!, 'SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await startServer(env);
    servers.push(second);
    const [, again] = await receiver.waitFor(2, 30_000);
    expect(again!.headers['webhook-id']).toBe(inFlight!.headers['webhook-id']);
    expect(again!.body).toBe(inFlight!.body);
    expect(verified(endpoint.secret, again!)).toMatchObject({ type: 'lead.created', data: { email: 'kill@example.com' } });

    const log = await probeUntil(
      async () => (await (await fetch(`${second.url}/api/v1/webhook_endpoints/${endpoint.id}/deliveries`, { headers })).json()) as { data: { status: string; attempts: number }[] },
      (page) => page.data[0]?.status === 'succeeded',
    );
    expect(log.data).toHaveLength(1);
    expect(log.data[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});

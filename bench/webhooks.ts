import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { newId } from '../src/lib/ids.js';
import { webhookDeliveryRepository } from '../src/modules/webhooks/repository.js';
import { deliveryOf } from '../src/modules/webhooks/queue.js';
import { systemContext } from '../src/lib/actor.js';
import { benchDatabaseEnv, dropBenchDatabase, settle, type Backend } from './databases.js';

// Webhook deliveries per second (issue 32: ≥ 300 per second on SQLite). `npm run bench` runs it (`--only
// webhooks`); on its own: `npx tsx bench/webhooks.ts [--db sqlite|postgres] [--deliveries 3000]`. It builds the
// app with buildApp as a deployment runs it (the job runner with its default WEBHOOK_CONCURRENCY; private
// hosts allowed for the local receiver), queues the deliveries of `--deliveries` events to one endpoint
// while the runner is stopped (not timed), then starts the runner and times until every delivery is
// recorded as succeeded: claim, sign, POST to a real node:http receiver on 127.0.0.1 that answers 204, and
// the attempt and the delivery written. Not part of `npm test`.

/** The measured throughput on one database. */
export interface WebhooksReport {
  backend: Backend;
  deliveries: number;
  concurrency: number;
  seconds: number;
  perSecond: number;
  /** Issue 32's target on SQLite (null on PostgreSQL). */
  target: { perSecond: number; pass: boolean } | null;
}

const TARGET_PER_SECOND = 300;
/** Pino's levels warn (40), error (50) and fatal (60). */
const WARNING = /"level":[456]0\b/;

async function startReceiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, count: () => received, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function buildBenchApp(env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({ ...env, OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' });
  // The runner is started by hand once the deliveries are queued (replyWorker: false keeps it stopped at ready).
  const app = await buildApp(config, { replyWorker: false, logDestination: { write: (line) => void (WARNING.test(line) && process.stderr.write(line)) } });
  await app.ready();
  return app;
}

/** Queues `deliveries` events' deliveries to one local endpoint, then times the job runner sending them all. */
export async function measureWebhooks(options: { backend: Backend; deliveries: number; log?: (line: string) => void }): Promise<WebhooksReport> {
  const { backend, deliveries } = options;
  const log = options.log ?? (() => {});
  const env = benchDatabaseEnv(backend, 'webhooks');
  const receiver = await startReceiver();
  const app = await buildBenchApp(env).catch(async (error: unknown) => {
    await receiver.close();
    await dropBenchDatabase(env);
    throw error;
  });
  try {
    const db = app.database.db;
    const workspace = await app.services.workspaces.create('Webhooks bench');
    const { endpoint } = await app.services.webhooks.create(systemContext(workspace.id, 'bench'), { url: receiver.url, events: ['*'] });
    log(`webhooks, ${backend}: queueing ${deliveries} deliveries…`);
    const data = { id: 'lead_bench', object: 'lead', email: 'bench@example.com', status: 'new', custom_fields: {} };
    for (let queued = 0; queued < deliveries; queued += 500) {
      const now = new Date();
      const rows = Array.from({ length: Math.min(500, deliveries - queued) }, () =>
        deliveryOf({ id: newId('event', now.getTime()), workspace_id: workspace.id, type: 'lead.created', created_at: now.toISOString(), data }, endpoint.id, now),
      );
      await db.transaction().execute((trx) => webhookDeliveryRepository.insert(trx, rows));
    }
    await settle(env);
    log(`webhooks, ${backend}: sending…`);
    const began = performance.now();
    app.runtime.worker.start();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'succeeded').executeTakeFirstOrThrow();
      if (Number(row.n) >= deliveries) break;
      if (performance.now() - began > 600_000) throw new Error(`webhooks: ${row.n} of ${deliveries} delivered after 10 minutes`);
    }
    const seconds = (performance.now() - began) / 1000;
    const perSecond = deliveries / seconds;
    if (receiver.count() < deliveries) throw new Error(`webhooks: the receiver got ${receiver.count()} of ${deliveries}`);
    return {
      backend,
      deliveries,
      concurrency: app.config.webhooks.concurrency,
      seconds: Math.round(seconds * 100) / 100,
      perSecond: Math.round(perSecond),
      target: backend === 'sqlite' ? { perSecond: TARGET_PER_SECOND, pass: perSecond >= TARGET_PER_SECOND } : null,
    };
  } finally {
    await app.close();
    await receiver.close();
    await dropBenchDatabase(env);
  }
}

/** The report as the Markdown docs/performance.md keeps. */
export function webhooksTable(report: WebhooksReport): string {
  const lines = [
    `Webhook deliveries, ${report.backend}: ${report.deliveries.toLocaleString('en-US')} queued deliveries to one local receiver (204), ` +
      `WEBHOOK_CONCURRENCY ${report.concurrency}: claim, sign, POST, attempt and outcome recorded.`,
    '',
    '| deliveries | seconds | deliveries / s |',
    '|---:|---:|---:|',
    `| ${report.deliveries.toLocaleString('en-US')} | ${report.seconds.toFixed(2)} | ${report.perSecond} |`,
  ];
  if (report.target) lines.push('', `- ${report.perSecond} deliveries per second, target ≥ ${report.target.perSecond}: ${report.target.pass ? 'PASS' : 'FAIL'}`);
  else lines.push('', '- no target on PostgreSQL (issue 32 sets it for SQLite)');
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(path.resolve(process.argv[1] ?? '')).href) {
  const { values } = parseArgs({ options: { db: { type: 'string', default: 'sqlite' }, deliveries: { type: 'string', default: '3000' } } });
  const report = await measureWebhooks({ backend: values.db === 'postgres' ? 'postgres' : 'sqlite', deliveries: Number(values.deliveries), log: (line) => console.error(line) });
  console.log(webhooksTable(report));
}

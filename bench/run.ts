import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { prepareDatabase } from '../src/db/database.js';
import { generate, SIZES, type DataSet } from './generate.js';
import { startLoadProcess } from './load.js';
import { buildServers, sourceServers, startNodeOptions, startProcess } from './processes.js';
import { markdownTable, medianRuns, printTable, workBudgets, type BenchReport } from './report.js';
import { runScenarios, type ScenarioResult } from './scenarios.js';

// `npm run bench -- [--db sqlite|postgres] [--size full|tiny] [--connections 1,10,50] [--seconds 5] [--runs 3]
// [--from-source] [--out <file>]`
// Starts the service and the baseline server as separate processes on a generated data set, drives them
// with autocannon from this process, and prints and saves (bench/results/, not committed) a table of ratios.
// `--seconds` may be a fraction; `--from-source` runs both servers under tsx instead of building them
// (`sourceServers`). The smoke test uses both to check the benchmark quickly; its figures do not count.
const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    size: { type: 'string', default: 'full' },
    connections: { type: 'string', default: '1,10,50' },
    seconds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
    'from-source': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const backend = values.db === 'postgres' ? 'postgres' : 'sqlite';
const size = values.size === 'tiny' ? SIZES.tiny : SIZES.full;
const connectionLevels = values.connections!.split(',').map(Number);
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const fromSource = values['from-source']!;
const pgUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const stamp = new Date().toISOString().replace(/[:.]/g, '-');

function databaseEnv(name: string): Record<string, string> {
  if (backend === 'postgres') return { DATABASE_URL: pgUrl, DATABASE_SCHEMA: `bench_${name}_${process.pid}`, REDIS_URL: redisUrl };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  return { DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}` };
}

async function cleanup(env: Record<string, string>): Promise<void> {
  if (env.DATABASE_SCHEMA) {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`drop schema if exists "${env.DATABASE_SCHEMA}" cascade`);
    await client.end();
  } else if (env.DATABASE_URL) {
    fs.rmSync(path.dirname(env.DATABASE_URL.replace(/^sqlite:/, '')), { recursive: true, force: true });
  }
}

/**
 * On PostgreSQL the bulk load is vacuumed and analyzed before anything is measured, as autovacuum would do
 * in a steady state: otherwise it wakes up on the freshly loaded tables in the middle of the run and takes
 * CPU from both servers (an earlier PostgreSQL run measured the bare server at a third of its SQLite-run
 * figure). SQLite needs nothing: closing the generator's connection checkpoints its WAL.
 */
async function settle(env: Record<string, string>): Promise<void> {
  if (!env.DATABASE_SCHEMA) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const { rows } = await client.query<{ name: string }>('select tablename as name from pg_tables where schemaname = $1', [env.DATABASE_SCHEMA]);
  for (const { name } of rows) await client.query(`vacuum (analyze) "${env.DATABASE_SCHEMA}"."${name}"`);
  await client.end();
}

const serviceEnv = databaseEnv('service');
const baselineEnv = databaseEnv('baseline');
const started = Date.now();
console.error(`generating the ${values.size} data set on ${backend}…`);
const { handle } = await prepareDatabase(loadConfig({ ...serviceEnv, LOG_LEVEL: 'silent' }).database);
let data: DataSet;
try {
  data = await generate(handle.db, size);
} finally {
  await handle.close();
}
const generationSeconds = Math.round((Date.now() - started) / 100) / 10;
console.error(`data set ready in ${generationSeconds} s`);
await settle(serviceEnv);

// The rate limits are raised so that they do not refuse the load. That includes the per-address budget of
// failed authentications: the 401 storm and the valid key beside it all come from 127.0.0.1, and at the
// default budget the storm would be answered with 429s before any key lookup (measuring the limiter, not the
// refusal of an invalid key) and the valid key would be refused with them.
const limits = {
  RATE_LIMIT_KEY_PER_MINUTE: '100000000',
  RATE_LIMIT_WORKSPACE_PER_MINUTE: '100000000',
  FAILED_AUTH_PER_IP_PER_MINUTE: '1000000000',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
};
// BENCH_SERVICE_NODE_ARGS: node options for the service only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
const nodeOptions = startNodeOptions();
const serviceNodeArgs = [...nodeOptions, ...(process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
console.error(fromSource ? 'starting the service and the baseline server from source…' : 'building the service and the baseline server…');
const entries = fromSource ? sourceServers() : buildServers();
const starting = [
  startProcess(entries.service, { ...serviceEnv, ...limits }, serviceNodeArgs),
  startProcess(entries.baseline, {
    ...baselineEnv,
    SERVICE_DATABASE_URL: serviceEnv.DATABASE_URL!,
    ...(serviceEnv.DATABASE_SCHEMA ? { SERVICE_DATABASE_SCHEMA: serviceEnv.DATABASE_SCHEMA } : {}),
    LOG_LEVEL: 'silent',
  }),
  startLoadProcess(),
] as const;
const [service, baseline, probe] = await Promise.all(starting).catch(async (error: unknown) => {
  // One did not start: stop the others, so that no process outlives the run.
  const stoppable = starting as readonly Promise<{ stop(): Promise<void> }>[];
  await Promise.all(stoppable.map((pending) => pending.then((p) => p.stop(), () => undefined)));
  throw error;
});
const all: ScenarioResult[][] = [];
try {
  for (let run = 1; run <= runs; run++) {
    const results: ScenarioResult[] = [];
    for (const connections of connectionLevels) {
      console.error(`run ${run}/${runs}, ${connections} connection(s)…`);
      results.push(...(await runScenarios({ service, baseline, probe }, data, connections, seconds)));
    }
    all.push(results);
  }
} finally {
  const rss = service.peakRssMb();
  await Promise.all([service.stop(), baseline.stop(), probe.stop()]);
  await Promise.all([cleanup(serviceEnv), cleanup(baselineEnv)]);
  const report: BenchReport = {
    date: new Date().toISOString(),
    backend,
    size: values.size!,
    node: process.version,
    nodeOptions,
    cpus: os.cpus().length,
    seconds,
    runs,
    fromSource,
    generationSeconds,
    peakRssMb: rss,
    rssTarget: '<= 300 MB',
    rssPass: rss > 0 && rss <= 300,
    results: medianRuns(all),
    budgets: [],
  };
  report.budgets = workBudgets(report.results);
  printTable(report);
  console.log(`\nFor docs/performance.md (\`npx tsx bench/markdown.ts <file> --connections 10\` gives one level):\n\n${markdownTable(report)}`);
  const file = values.out ?? path.join('bench', 'results', `${stamp}-${backend}-${values.size}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ ...report, rawRuns: all }, null, 2)}\n`);
  console.error(`results written to ${file}`);
}

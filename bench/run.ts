import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { prepareDatabase } from '../src/db/database.js';
import { benchDatabaseEnv, dropBenchDatabase, settle } from './databases.js';
import { generate, SIZES, type DataSet } from './generate.js';
import { measureIngestion } from './ingestion.js';
import { measureKnowledgeSearch } from './knowledge-search.js';
import { measureLiveStreams } from './live-streams.js';
import { measureReplies } from './replies.js';
import { measureWebhooks } from './webhooks.js';
import { startLoadProcess } from './load.js';
import { buildServers, sourceServers, startNodeOptions, startProcess } from './processes.js';
import { BENCH_PARTS, markdownTable, medianRuns, printTable, workBudgets, type BenchPart, type BenchReport } from './report.js';
import { runScenarios, type ScenarioResult } from './scenarios.js';

// `npm run bench -- [--db sqlite|postgres] [--only http,knowledge,ingestion,replies,webhooks,live] [--size full|tiny]
// [--connections 1,10,50] [--seconds 5] [--runs 3] [--chunks 1000,10000,100000] [--pages 200] [--from-source]
// [--out <file>]`
// The HTTP scenarios (`http`): starts the service and the baseline server as separate processes on a
// generated data set, drives them with autocannon from this process, and prints and saves (bench/results/,
// not committed) a table of ratios. `--seconds` may be a fraction; `--from-source` runs both servers under
// tsx instead of building them (`sourceServers`). The smoke test uses both to check the benchmark quickly;
// its figures do not count. Then knowledge search as one agent's chunks grow (`knowledge`, `--chunks`) and
// the ingestion of a local website (`ingestion`, `--pages`, `--runs` times), and the builtin provider's reply
// latency at the same chunk sizes (`replies`), and webhook deliveries per second to a local receiver (`webhooks`,
// 5,000 deliveries), all in this process; `--size tiny` makes them small too (100 and 1,000 chunks, 20 pages,
// 300 deliveries). Then 5,000 idle widget streams on one instance, their memory and the fan-out latency of 100
// operator messages per second for 10 s (`live`, bench/live-streams.ts; tiny: 200 streams, 3 s).
const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    only: { type: 'string', default: BENCH_PARTS.join(',') },
    size: { type: 'string', default: 'full' },
    connections: { type: 'string', default: '1,10,50' },
    seconds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
    chunks: { type: 'string' },
    pages: { type: 'string' },
    'from-source': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const backend = values.db === 'postgres' ? 'postgres' : 'sqlite';
const parts = values.only!.split(',').map((part) => part.trim()) as BenchPart[];
const unknown = parts.filter((part) => !BENCH_PARTS.includes(part));
if (unknown.length || !parts.length) {
  console.error(`--only takes a list of ${BENCH_PARTS.join(', ')}; got "${values.only}"`);
  process.exit(2);
}
const tiny = values.size === 'tiny';
const size = tiny ? SIZES.tiny : SIZES.full;
const connectionLevels = values.connections!.split(',').map(Number);
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const chunkSizes = (values.chunks ?? (tiny ? '100,1000' : '1000,10000,100000')).split(',').map(Number);
const pageCount = Number(values.pages ?? (tiny ? 20 : 200));
const fromSource = values['from-source']!;
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const progress = (line: string) => console.error(line);

/** The HTTP scenarios (`http`): fills the report's HTTP fields and returns every run's rows. */
async function runHttp(report: BenchReport): Promise<ScenarioResult[][]> {
  const serviceEnv = benchDatabaseEnv(backend, 'service');
  const baselineEnv = benchDatabaseEnv(backend, 'baseline');
  const started = Date.now();
  console.error(`generating the ${values.size} data set on ${backend}…`);
  const { handle } = await prepareDatabase(loadConfig({ ...serviceEnv, LOG_LEVEL: 'silent' }).database);
  let data: DataSet;
  try {
    data = await generate(handle.db, size);
  } finally {
    await handle.close();
  }
  report.generationSeconds = Math.round((Date.now() - started) / 100) / 10;
  console.error(`data set ready in ${report.generationSeconds} s`);
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
  const serviceNodeArgs = [...report.nodeOptions, ...(process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
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
    await Promise.all([dropBenchDatabase(serviceEnv), dropBenchDatabase(baselineEnv)]);
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
    await Promise.all([dropBenchDatabase(serviceEnv), dropBenchDatabase(baselineEnv)]);
    report.peakRssMb = rss;
    report.rssPass = rss > 0 && rss <= 300;
    report.results = medianRuns(all);
    report.budgets = workBudgets(report.results);
  }
  return all;
}

const report: BenchReport = {
  date: new Date().toISOString(),
  backend,
  size: values.size!,
  node: process.version,
  nodeOptions: startNodeOptions(),
  cpus: os.cpus().length,
  seconds,
  runs,
  fromSource,
  generationSeconds: 0,
  peakRssMb: 0,
  rssTarget: '<= 300 MB',
  rssPass: false,
  results: [],
  budgets: [],
  parts,
};
let rawRuns: ScenarioResult[][] = [];
try {
  if (parts.includes('http')) rawRuns = await runHttp(report);
  // In this process, after the servers have stopped: nothing else runs on the machine's CPUs meanwhile.
  if (parts.includes('knowledge')) report.knowledge = await measureKnowledgeSearch({ backend, sizes: chunkSizes, queries: tiny ? 50 : 200, dimensions: tiny ? 32 : 768, log: progress });
  if (parts.includes('ingestion')) report.ingestion = await measureIngestion({ backend, pages: pageCount, runs, log: progress });
  if (parts.includes('replies')) report.replies = await measureReplies({ backend, sizes: chunkSizes, queries: tiny ? 50 : 200, log: progress });
  if (parts.includes('webhooks')) report.webhooks = await measureWebhooks({ backend, deliveries: tiny ? 300 : 5000, log: progress });
  if (parts.includes('live')) report.live = await measureLiveStreams({ backend, streams: tiny ? 200 : 5000, seconds: tiny ? 3 : 10, log: progress });
} finally {
  printTable(report);
  console.log(`\nFor docs/performance.md (\`npx tsx bench/markdown.ts <file> --connections 10\` gives one level):\n\n${markdownTable(report)}`);
  const file = values.out ?? path.join('bench', 'results', `${stamp}-${backend}-${values.size}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ ...report, rawRuns }, null, 2)}\n`);
  console.error(`results written to ${file}`);
}

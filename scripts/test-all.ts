// `npm test`: the whole suite on the embedded default (SQLite) and on PostgreSQL + Redis, the two runs side by
// side (each line of output tagged with its run). PostgreSQL and Redis are this machine's (127.0.0.1:5432
// database `test`, 127.0.0.1:6379), or TEST_DATABASE_URL / TEST_REDIS_URL. When they are unreachable the
// second run is skipped with a notice on a developer machine, and FAILS under CI=true.
//
// Side by side, because the PostgreSQL run goes one file at a time (vitest.config.ts) and mostly waits on
// its servers, processes and timeouts: one after the other the two took 27 minutes on a 2-core machine. The
// SQLite run then gets one worker fewer than the cores, so the two runs together use one per core.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import generateClientTypes from '../test/global-setup.js';
import { ensureBuild } from '../test/helpers/build.js';

const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const extra = process.argv.slice(2);

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname || '127.0.0.1', port: Number(port || defaultPort) });
    socket.setTimeout(2000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

const counts = { passed: 0, failed: 0, skipped: 0 };

// Runs vitest with its usual output, each line tagged, plus a JSON report whose counts make the closing summary line.
async function vitest(tag: string, env: Record<string, string>, args: string[] = []): Promise<number> {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vitest-report-')), 'report.json');
  const child = spawn('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...args, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  for (const stream of [child.stdout, child.stderr]) readline.createInterface({ input: stream }).on('line', (line) => console.log(`${tag} ${line}`));
  const status = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  try {
    const json = JSON.parse(fs.readFileSync(report, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
    counts.passed += json.numPassedTests;
    counts.failed += json.numFailedTests;
    counts.skipped += json.numPendingTests + json.numTodoTests;
  } catch {
    counts.failed += 1; // no report: the run itself failed
  }
  return status;
}

// What both runs' global setups would otherwise write at the same moment: the client types and the build.
await generateClientTypes();
await ensureBuild('server', 'web');

const up = (await reachable(postgresUrl, 5432)) && (await reachable(redisUrl, 6379));
if (!up && process.env.CI === 'true') console.error(`\nPostgreSQL (${postgresUrl}) or Redis (${redisUrl}) is unreachable: under CI this is a failure.`);
if (!up && process.env.CI !== 'true') console.warn(`\nNOTICE: PostgreSQL (${postgresUrl}) or Redis (${redisUrl}) is unreachable: the PostgreSQL + Redis run was NOT done.`);
const sqliteWorkers = up ? [`--maxWorkers=${Math.max(1, os.availableParallelism() - 1)}`] : [];
const [sqlite, postgres] = await Promise.all([
  vitest('[sqlite]', { TEST_DATABASE_URL: '', TEST_REDIS_URL: '' }, sqliteWorkers),
  up ? vitest('[postgres]', { TEST_DATABASE_URL: postgresUrl, TEST_REDIS_URL: redisUrl }) : Promise.resolve(process.env.CI === 'true' ? 1 : 0),
]);
console.log(`\nSQLite run: ${sqlite === 0 ? 'passed' : 'FAILED'}; PostgreSQL + Redis run: ${up ? (postgres === 0 ? 'passed' : 'FAILED') : process.env.CI === 'true' ? 'FAILED (unreachable)' : 'not run'}`);
console.log(`${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`);
process.exit(sqlite || postgres);

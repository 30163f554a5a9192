// `npm test`: the whole suite on the embedded default (SQLite), then again on PostgreSQL + Redis.
// PostgreSQL and Redis are this machine's (127.0.0.1:5432 database `test`, 127.0.0.1:6379), or
// TEST_DATABASE_URL / TEST_REDIS_URL. When they are unreachable the second run is skipped with a notice
// on a developer machine, and FAILS under CI=true.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

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

// Runs vitest with its usual output, plus a JSON report whose counts make the closing summary line.
function vitest(label: string, env: Record<string, string>): number {
  console.log(`\n=== test suite on ${label} ===\n`);
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vitest-report-')), 'report.json');
  const result = spawnSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  try {
    const json = JSON.parse(fs.readFileSync(report, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
    counts.passed += json.numPassedTests;
    counts.failed += json.numFailedTests;
    counts.skipped += json.numPendingTests + json.numTodoTests;
  } catch {
    counts.failed += 1; // no report: the run itself failed
  }
  return result.status ?? 1;
}

const sqlite = vitest('SQLite (embedded default)', { TEST_DATABASE_URL: '', TEST_REDIS_URL: '' });
const up = (await reachable(postgresUrl, 5432)) && (await reachable(redisUrl, 6379));
let postgres = 0;
if (up) {
  postgres = vitest('PostgreSQL + Redis', { TEST_DATABASE_URL: postgresUrl, TEST_REDIS_URL: redisUrl });
} else if (process.env.CI === 'true') {
  console.error(`\nPostgreSQL (${postgresUrl}) or Redis (${redisUrl}) is unreachable: under CI this is a failure.`);
  postgres = 1;
} else {
  console.warn(`\nNOTICE: PostgreSQL (${postgresUrl}) or Redis (${redisUrl}) is unreachable: the PostgreSQL + Redis run was NOT done.`);
}
console.log(`\nSQLite run: ${sqlite === 0 ? 'passed' : 'FAILED'}; PostgreSQL + Redis run: ${up ? (postgres === 0 ? 'passed' : 'FAILED') : process.env.CI === 'true' ? 'FAILED (unreachable)' : 'not run'}`);
console.log(`${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`);
process.exit(sqlite || postgres);

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { backend } from '../helpers/database.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

// The benchmark itself is checked at a tiny size so that it cannot rot: it generates data, starts the
// service and the baseline server, drives every scenario and writes its report. Quickly: each measurement
// lasts a quarter of a second and both servers run from source under tsx (the two tsc builds took most of
// the time; the type check, whose tsconfig.json includes bench/, compiles the same code), so its figures mean
// nothing.
describe('npm run bench (tiny)', () => {
  it('runs every scenario against the real processes and writes a complete report', { timeout: 300_000 }, async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-')), 'report.json');
    const env: Record<string, string> = { ...(process.env as Record<string, string>) };
    if (backend === 'postgres') {
      env.BENCH_DATABASE_URL = process.env.TEST_DATABASE_URL!;
      env.BENCH_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    }
    const args = ['--db', backend, '--size', 'tiny', '--connections', '2', '--seconds', '0.25', '--runs', '1', '--from-source', '--out', out];
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], { cwd: ROOT, env, maxBuffer: 10 * 1024 * 1024 });
    expect(stdout).toContain('GET /chatbots/{id}');
    // The compact table for docs/performance.md, ending with the peak RSS.
    expect(stdout).toContain('| scenario | connections | req/s | p50 ms | ratio | target | pass |');
    expect(stdout).toMatch(/\| server peak RSS \| — \| — \| — \| \d+ MB \| ≤ 300 MB \| (PASS|FAIL) \|/);
    // Reply latency (issue 31): the builtin provider's stored answers beside bare search, at each chunk size.
    expect(stdout).toContain('| chunks | reply p50 ms | reply p99 ms | search p50 ms | search p99 ms | reply p50 / search p50 | answered from knowledge |');
    const report = JSON.parse(fs.readFileSync(out, 'utf8')) as {
      backend: string;
      peakRssMb: number;
      results: { scenario: string; rps: number; p50: number; errors: number; ratio: number | null; cpuUsPerRequest: number | null; comparedRps?: number; pass: boolean | null }[];
      budgets: { connections: number; budgetUs: Record<string, number | null>; equivalentUs: Record<string, number | null> }[];
      replies?: { rows: { chunks: number; reply: { p50: number }; search: { p50: number } }[] };
      live?: { streams: number; memory: { heapPerStream: number }; fanOut: { produced: number; delivered: number; misrouted: number; duplicates: number; p50: number } };
    };
    expect(report.backend).toBe(backend);
    expect(report.peakRssMb).toBeGreaterThan(0);
    expect(report.replies?.rows.map((r) => r.chunks)).toEqual([100, 1000]);
    for (const row of report.replies?.rows ?? []) expect(row.reply.p50, `replies at ${row.chunks} chunks`).toBeGreaterThan(0);
    // Live widget streams (issue 32): every operator message reached its conversation's open stream, once.
    expect(stdout).toContain('| streams | heap KB / stream | RSS KB / stream | fan-out p50 ms | fan-out p99 ms | max ms | p99 / max from due time ms | write alone p50 / p99 ms | delivered / produced |');
    expect(report.live?.streams).toBe(200);
    expect(report.live?.memory.heapPerStream).toBeGreaterThan(0);
    expect(report.live?.fanOut.produced).toBeGreaterThan(0);
    expect(report.live?.fanOut).toMatchObject({ delivered: report.live?.fanOut.produced, misrouted: 0, duplicates: 0 });
    expect(report.live?.fanOut.p50).toBeGreaterThan(0);
    const scenarios = report.results.map((r) => r.scenario);
    expect(scenarios).toEqual([
      'bare',
      'bare + 10 µs of work',
      'bare + 20 µs of work',
      'bare + 40 µs of work',
      'bare + 80 µs of work',
      'bare + 160 µs of work',
      'bare + 320 µs of work',
      'bare-write',
      'bare-write, two inserts only',
      'bare + agent read (data access only)',
      'bare + 20-lead page read (data access only)',
      'GET /chatbots/{id}',
      'GET /leads?limit=20',
      'GET /leads deep page (90% in)',
      'POST /leads + Idempotency-Key',
      'POST /leads vs two inserts only',
      'POST /leads without Idempotency-Key',
      'GET /analytics (10k messages)',
      'GET /analytics (1M messages)',
      'bare refusal (401 + log line)',
      '401 storm (invalid keys)',
      'valid key during the storm',
    ]);
    for (const result of report.results) {
      expect(result.rps, result.scenario).toBeGreaterThan(0);
      expect(result.errors, result.scenario).toBe(0);
    }
    // Every scenario measured on its own says how much server CPU time a request took.
    for (const result of report.results.filter((r) => r.scenario !== 'valid key during the storm')) {
      expect(result.cpuUsPerRequest, result.scenario).toBeGreaterThan(0);
    }
    // The calibration reads as a budget per target at the run's one concurrency.
    expect(report.budgets.map((b) => b.connections)).toEqual([2]);
    expect(Object.keys(report.budgets[0]!.budgetUs)).toEqual(['0.4', '0.35', '0.15']);
    expect(Object.keys(report.budgets[0]!.equivalentUs)).toEqual(['GET /chatbots/{id}', 'GET /leads?limit=20', '401 storm (invalid keys)']);
    for (const scenario of ['GET /chatbots/{id}', 'GET /leads?limit=20', 'POST /leads + Idempotency-Key', 'POST /leads without Idempotency-Key', '401 storm (invalid keys)']) {
      const row = report.results.find((r) => r.scenario === scenario);
      expect(row?.ratio, scenario).toEqual(expect.any(Number));
      // Measured against its comparison in alternating slices, whose throughput the row keeps.
      expect(row?.comparedRps, scenario).toBeGreaterThan(0);
    }
    expect(report.results.find((r) => r.scenario === 'valid key during the storm')?.pass).toEqual(expect.any(Boolean));
  });
});

import type { ScenarioResult } from './scenarios.js';

/** A whole benchmark run, as saved under bench/results/. */
export interface BenchReport {
  date: string;
  backend: string;
  size: string;
  node: string;
  cpus: number;
  seconds: number;
  runs: number;
  generationSeconds: number;
  peakRssMb: number;
  rssTarget: string;
  rssPass: boolean;
  results: ScenarioResult[];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The median of each figure over the runs, per scenario and concurrency; a target passes on the median ratio. */
export function medianRuns(runs: ScenarioResult[][]): ScenarioResult[] {
  const first = runs[0] ?? [];
  return first.map((row, i) => {
    const same = runs.map((run) => run[i]!).filter(Boolean);
    const ratios = same.map((r) => r.ratio).filter((r): r is number => r !== null);
    const ratio = ratios.length ? Math.round(median(ratios) * 100) / 100 : null;
    const passes = same.map((r) => r.pass);
    return {
      ...row,
      rps: Math.round(median(same.map((r) => r.rps))),
      p50: median(same.map((r) => r.p50)),
      p99: median(same.map((r) => r.p99)),
      mean: median(same.map((r) => r.mean)),
      errors: same.reduce((sum, r) => sum + r.errors, 0),
      non2xx: median(same.map((r) => r.non2xx)),
      requests: median(same.map((r) => r.requests)),
      ratio,
      pass: passes.includes(null) ? null : passes.filter((p) => p).length * 2 > passes.length,
    };
  });
}

/** Prints the report as a table on the terminal (stderr stays free for progress). */
export function printTable(report: BenchReport): void {
  const rows = report.results.map((r) => [
    r.scenario,
    String(r.connections),
    String(Math.round(r.rps)),
    `${r.p50} ms`,
    `${r.mean} ms`,
    `${r.p99} ms`,
    String(r.errors),
    r.ratio === null ? '' : String(r.ratio),
    r.target,
    r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL',
  ]);
  const header = ['scenario', 'conn', 'req/s', 'p50', 'mean', 'p99', 'errors', 'ratio', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${report.backend} · ${report.size} data · median of ${report.runs} run(s) · ${report.seconds} s per scenario · node ${report.node} · ${report.cpus} CPUs`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  console.log(`\nserver peak RSS: ${report.peakRssMb} MB (target ${report.rssTarget}: ${report.rssPass ? 'PASS' : 'FAIL'}); data set generated in ${report.generationSeconds} s`);
}

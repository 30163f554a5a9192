import fs from 'node:fs';
import type { BenchReport } from './report.js';
import type { ScenarioResult } from './scenarios.js';

// `npx tsx bench/markdown.ts bench/results/<file>.json`: the report as the Markdown table of
// docs/performance.md, one row per scenario with its figures at every concurrency level.

const report = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as BenchReport;
const levels = [...new Set(report.results.map((r) => r.connections))];
const scenarios = [...new Set(report.results.map((r) => r.scenario))];
const at = (scenario: string, connections: number) => report.results.find((r) => r.scenario === scenario && r.connections === connections);
const joined = (rows: (ScenarioResult | undefined)[], cell: (r: ScenarioResult) => string) => rows.map((r) => (r ? cell(r) : '–')).join(' / ');
const grouped = (n: number) => Math.round(n).toLocaleString('en-US');

console.log(`| scenario | req/s | p50 ms | p99 ms | server CPU µs/req | ratio | against req/s | target | |`);
console.log(`|---|---|---|---|---|---|---|---|---|`);
for (const scenario of scenarios) {
  const rows = levels.map((level) => at(scenario, level));
  const first = rows.find(Boolean)!;
  const ratios = rows.some((r) => r?.ratio !== null && r?.ratio !== undefined) ? joined(rows, (r) => (r.ratio === null ? '' : r.ratio.toFixed(2))) : '';
  const against = rows.some((r) => r?.comparedRps !== undefined) ? joined(rows, (r) => (r.comparedRps === undefined ? '' : grouped(r.comparedRps))) : '';
  const verdicts = rows.some((r) => r?.pass !== null && r?.pass !== undefined) ? joined(rows, (r) => (r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL')) : '';
  console.log(
    `| ${scenario} | ${joined(rows, (r) => grouped(r.rps))} | ${joined(rows, (r) => r.p50.toFixed(2))} | ${joined(rows, (r) => r.p99.toFixed(2))} | ` +
      `${joined(rows, (r) => (r.cpuUsPerRequest === null ? '' : String(Math.round(r.cpuUsPerRequest))))} | ${ratios} | ${against} | ${first.target} | ${verdicts} |`,
  );
}
console.log(`\nConnections: ${levels.join(' / ')}. Server peak RSS ${report.peakRssMb} MB (target ${report.rssTarget}: ${report.rssPass ? 'PASS' : 'FAIL'}); data set generated in ${report.generationSeconds} s; median of ${report.runs} runs of ${report.seconds} s per scenario.`);
for (const budget of report.budgets) {
  const targets = Object.entries(budget.budgetUs).map(([ratio, us]) => `${ratio} × bare: ${us === null ? 'beyond the calibration' : `${us} µs`}`).join(', ');
  const equivalents = Object.entries(budget.equivalentUs).map(([name, us]) => `${name}: ${us === null ? 'beyond the calibration' : `${us} µs`}`).join(', ');
  console.log(`\n- ${budget.connections} connection(s): work a target leaves: ${targets}; work equivalent to each scenario: ${equivalents}.`);
}

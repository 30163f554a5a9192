import type { IngestionReport } from './ingestion.js';
import type { KnowledgeSearchReport } from './knowledge-search.js';
import { liveStreamsTable, type LiveStreamsReport } from './live-streams.js';
import type { RepliesReport } from './replies.js';
import { webhooksTable, type WebhooksReport } from './webhooks.js';
import type { ScenarioResult } from './scenarios.js';

/** The parts of `npm run bench` (`--only`): the HTTP scenarios, knowledge search, website ingestion, reply latency, webhook deliveries, live streams. */
export const BENCH_PARTS = ['http', 'knowledge', 'ingestion', 'replies', 'webhooks', 'live'] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

/** A whole benchmark run, as saved under bench/results/. */
export interface BenchReport {
  date: string;
  backend: string;
  size: string;
  node: string;
  /** The node options the service ran with (those of `npm start`); the baseline server runs with node's defaults. */
  nodeOptions: string[];
  cpus: number;
  seconds: number;
  runs: number;
  /** The servers ran from their sources under tsx (`--from-source`, the smoke test): figures that do not count. */
  fromSource?: boolean;
  generationSeconds: number;
  peakRssMb: number;
  rssTarget: string;
  rssPass: boolean;
  results: ScenarioResult[];
  /** Per concurrency: how many µs of work per request each throughput target leaves (from the calibration). */
  budgets: WorkBudget[];
  /** The parts that ran; without `http`, the HTTP fields above are empty (no results, RSS 0). */
  parts?: BenchPart[];
  knowledge?: KnowledgeSearchReport;
  ingestion?: IngestionReport;
  replies?: RepliesReport;
  webhooks?: WebhooksReport;
  live?: LiveStreamsReport;
}

/** What the calibration (bare + N µs of work) says at one concurrency. */
export interface WorkBudget {
  connections: number;
  /** Target ratio to bare → the work per request (µs) at which the calibrated route reaches it. */
  budgetUs: Record<string, number | null>;
  /** Scenario compared with bare → the work per request (µs) of a calibrated route as fast as it. */
  equivalentUs: Record<string, number | null>;
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
      cpuUsPerRequest: row.cpuUsPerRequest === null ? null : median(same.map((r) => r.cpuUsPerRequest ?? 0)),
      mean: median(same.map((r) => r.mean)),
      errors: same.reduce((sum, r) => sum + r.errors, 0),
      non2xx: median(same.map((r) => r.non2xx)),
      requests: median(same.map((r) => r.requests)),
      ...(row.comparedRps === undefined ? {} : { comparedRps: Math.round(median(same.map((r) => r.comparedRps ?? 0))) }),
      ratio,
      pass: passes.includes(null) ? null : passes.filter((p) => p).length * 2 > passes.length,
    };
  });
}

const TARGET_RATIOS = [0.4, 0.35, 0.15];
/** The scenarios whose target is a ratio to bare. */
const AGAINST_BARE = ['GET /chatbots/{id}', 'GET /leads?limit=20', '401 storm (invalid keys)'];

/**
 * Reads the calibration curve (ratio to bare as work per request grows, with bare itself at 0 µs) at one
 * concurrency, by linear interpolation: the work each target ratio allows, and the work that would make the
 * bare route as slow as each scenario. Null when the ratio lies beyond the calibrated range.
 */
export function workBudgets(results: ScenarioResult[]): WorkBudget[] {
  const levels = [...new Set(results.map((r) => r.connections))];
  return levels.map((connections) => {
    const rows = results.filter((r) => r.connections === connections);
    const curve = [{ us: 0, ratio: 1 }];
    for (const row of rows) {
      const match = /^bare \+ (\d+) µs of work$/.exec(row.scenario);
      if (match && row.ratio !== null) curve.push({ us: Number(match[1]), ratio: row.ratio });
    }
    const workAt = (ratio: number): number | null => {
      for (let i = 1; i < curve.length; i++) {
        const a = curve[i - 1]!;
        const b = curve[i]!;
        if (ratio <= a.ratio && ratio >= b.ratio && a.ratio !== b.ratio) return Math.round(a.us + ((a.ratio - ratio) / (a.ratio - b.ratio)) * (b.us - a.us));
      }
      return null;
    };
    const budgetUs = Object.fromEntries(TARGET_RATIOS.map((ratio) => [String(ratio), workAt(ratio)]));
    const equivalentUs = Object.fromEntries(
      rows.filter((r) => AGAINST_BARE.includes(r.scenario) && r.ratio !== null).map((r) => [r.scenario, workAt(r.ratio!)]),
    );
    return { connections, budgetUs, equivalentUs };
  });
}

/**
 * Prints the HTTP scenarios as a table on the terminal (stderr stays free for progress), with the calibration
 * budgets and the server's RSS; knowledge search and ingestion have their one table (`markdownTable`).
 */
export function printTable(report: BenchReport): void {
  if (!report.results.length) return;
  const rows = report.results.map((r) => [
    r.scenario,
    String(r.connections),
    String(Math.round(r.rps)),
    `${r.p50.toFixed(2)} ms`,
    `${r.mean.toFixed(2)} ms`,
    `${r.p99.toFixed(2)} ms`,
    r.cpuUsPerRequest === null ? '' : `${r.cpuUsPerRequest} µs`,
    String(r.errors),
    r.ratio === null ? '' : String(r.ratio),
    r.comparedRps === undefined ? '' : String(r.comparedRps),
    r.target,
    r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL',
  ]);
  const header = ['scenario', 'conn', 'req/s', 'p50', 'mean', 'p99', 'cpu/req', 'errors', 'ratio', 'against req/s', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${runLine(report)}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  const us = (value: number | null | undefined) => (value === null || value === undefined ? 'beyond the calibration' : `${value} µs`);
  for (const budget of report.budgets) {
    const targets = Object.entries(budget.budgetUs).map(([ratio, value]) => `${ratio} x bare: ${us(value)}`);
    const scenarios = Object.entries(budget.equivalentUs).map(([name, value]) => `${name}: ${us(value)}`);
    console.log(`\nwork per request that a target leaves, ${budget.connections} connection(s): ${targets.join(' · ')}`);
    console.log(`  the bare route would be as fast as each scenario with this much work: ${scenarios.join(' · ')}`);
  }
  console.log(`\nserver peak RSS: ${report.peakRssMb} MB (target ${report.rssTarget}: ${report.rssPass ? 'PASS' : 'FAIL'}); data set generated in ${report.generationSeconds} s`);
}

/** What a run was: database, data, runs, node and machine. */
function runLine(report: BenchReport): string {
  const source = report.fromSource ? ' · servers from source under tsx (figures do not count)' : '';
  return `${report.backend} · ${report.size} data · median of ${report.runs} run(s) · ${report.seconds} s per scenario · node ${report.node} ${report.nodeOptions.join(' ')} · ${report.cpus} CPUs${source}`;
}

/** The rows docs/performance.md keeps: the baselines, every target, and what the idempotency layer costs. */
const IN_DOCS = (r: ScenarioResult) => r.target === 'baseline' || r.pass !== null || r.scenario === 'POST /leads without Idempotency-Key';

/** A target as docs/performance.md writes it: `>= 0.40 x bare rps` becomes `≥ 0.40 × bare`. */
const docTarget = (target: string) => target.replace(/>=/g, '≥').replace(/<=/g, '≤').replace(/ x /g, ' × ').replace(/ (rps|p50)$/, '');

/**
 * The report as the compact Markdown tables of docs/performance.md. The HTTP scenarios: per scenario at each
 * concurrency level (level by level, as measured), req/s, p50, ratio, target and verdict, then the server's
 * peak RSS; by default only the rows the page keeps (`IN_DOCS`) at every level, `all` gives every scenario.
 * Then knowledge search, website ingestion and reply latency, when they ran.
 */
export function markdownTable(report: BenchReport, options: { connections?: number; all?: boolean } = {}): string {
  const machine = `Run: ${report.backend} · node ${report.node} · ${report.cpus} CPUs.`;
  const parts = report.results.length ? [httpMarkdownTable(report, options)] : [machine];
  if (report.knowledge) parts.push(knowledgeSearchTable(report.knowledge));
  if (report.ingestion) parts.push(ingestionTable(report.ingestion));
  if (report.replies) parts.push(repliesTable(report.replies));
  if (report.webhooks) parts.push(webhooksTable(report.webhooks));
  if (report.live) parts.push(liveStreamsTable(report.live));
  return parts.join('\n\n');
}

/** The HTTP scenarios' rows of `markdownTable`. */
function httpMarkdownTable(report: BenchReport, options: { connections?: number; all?: boolean }): string {
  const none = '—';
  const grouped = (n: number) => Math.round(n).toLocaleString('en-US');
  const verdict = (pass: boolean | null) => (pass === null ? none : pass ? 'PASS' : 'FAIL');
  const rows = report.results.filter((r) => (options.all || IN_DOCS(r)) && (options.connections === undefined || r.connections === options.connections));
  const lines = [`Run: ${runLine(report)}.`, '', '| scenario | connections | req/s | p50 ms | ratio | target | pass |', '|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    // The valid key's one connection runs beside the storm at the level's concurrency.
    const connections = r.scenario === 'valid key during the storm' ? `${r.connections} storm + 1` : String(r.connections);
    const ratio = r.ratio === null ? none : r.ratio.toFixed(2);
    lines.push(`| ${r.scenario} | ${connections} | ${grouped(r.rps)} | ${r.p50.toFixed(2)} | ${ratio} | ${docTarget(r.target)} | ${verdict(r.pass)} |`);
  }
  lines.push(`| server peak RSS | ${none} | ${none} | ${none} | ${report.peakRssMb} MB | ${docTarget(report.rssTarget)} | ${verdict(report.rssPass)} |`);
  return lines.join('\n');
}

/** The report as the Markdown table docs/performance.md keeps (one database). */
export function knowledgeSearchTable(report: KnowledgeSearchReport): string {
  const grouped = (n: number) => n.toLocaleString('en-US');
  const lines = [
    `Knowledge search, ${report.backend}: one agent, ${report.queries} questions, limit 5${report.dimensions ? `; hybrid with ${report.dimensions}-dimension vectors` : ''}.`,
    '',
    '| chunks | insert (chunks/s) | full text p50 ms | full text p99 ms | hybrid p50 ms | hybrid p99 ms | vector cells |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...report.rows.map((r) => `| ${grouped(r.chunks)} | ${grouped(r.insertPerSecond)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.hybrid?.p50.toFixed(1) ?? '—'} | ${r.hybrid?.p99.toFixed(1) ?? '—'} | ${r.hybrid ? grouped(r.hybrid.cells) : '—'} |`),
  ];
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const verdicts: string[] = [];
  if (report.target) verdicts.push(`p50 at 100,000 chunks: ${report.rows.find((r) => r.chunks === 100_000)!.p50.toFixed(1)} ms, target ≤ ${report.target.p50Ms} ms: ${verdict(report.target.pass)}`);
  if (report.growth) {
    const { from, to, ratio, pass } = report.growth;
    verdicts.push(`p50 at ${grouped(to)} / p50 at ${grouped(from)} chunks: ${ratio.toFixed(2)}, sublinear below 10: ${verdict(pass)}`);
  }
  if (verdicts.length) lines.push('', ...verdicts.map((line) => `- ${line}`));
  return lines.join('\n');
}

/** The report as the Markdown table docs/performance.md keeps (one database). */
export function ingestionTable(report: IngestionReport): string {
  const { site, baselines, median } = report;
  const lines = [
    `Website ingestion, ${report.backend}: ${report.pages} pages of ${site.wordsMin}–${site.wordsMax} words (mean ${site.wordsMean}), ` +
      `${Math.round(site.htmlBytes / 1024)} KiB of HTML; median of ${report.runs.length} run(s).`,
    '',
    '| what | pages/s | seconds | chunks | ratio |',
    '|---|---:|---:|---:|---:|',
    `| fetch only (baseline) | ${baselines.fetchPagesPerSecond} | — | — | — |`,
    `| fetch + parse + chunk, nothing stored (baseline) | ${baselines.parsePagesPerSecond} | — | — | 1.00 |`,
    `| website source, POST → ready | ${median.pagesPerSecond} | ${median.seconds} | ${median.chunks} | ${report.ratioToParse.toFixed(2)} |`,
  ];
  const failed = report.runs.reduce((sum, run) => sum + run.failedDocuments, 0);
  const short = report.runs.filter((run) => run.documents !== report.pages).length;
  if (failed || short) lines.push('', `- ${failed} failed document(s), ${short} run(s) short of ${report.pages} pages`);
  return lines.join('\n');
}

/** The report as the Markdown table docs/performance.md keeps (one database), with the verdict on issue 31's target. */
export function repliesTable(report: RepliesReport): string {
  const grouped = (n: number) => n.toLocaleString('en-US');
  const lines = [
    `Reply latency (builtin provider), ${report.backend}: one agent, ${report.queries} questions after ${report.warmup} to warm up, each in a new conversation; ` +
      'widget POST of the message → response with the stored answer, beside knowledge search alone (limit 5) for the same questions.',
    '',
    '| chunks | reply p50 ms | reply p99 ms | search p50 ms | search p99 ms | reply p50 / search p50 | answered from knowledge |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...report.rows.map((r) =>
      `| ${grouped(r.chunks)} | ${r.reply.p50.toFixed(1)} | ${r.reply.p99.toFixed(1)} | ${r.search.p50.toFixed(1)} | ${r.search.p99.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.answered} / ${report.queries} |`),
  ];
  const { target } = report;
  if (target) {
    const p50 = report.rows.find((r) => r.chunks === target.chunks)!.reply.p50;
    lines.push('', `- reply p50 at ${grouped(target.chunks)} chunks: ${p50.toFixed(1)} ms, target ≤ ${target.p50Ms} ms: ${target.pass ? 'PASS' : 'FAIL'}`);
  } else if (report.backend === 'postgres') {
    lines.push('', '- no target on PostgreSQL (issue 31 sets it for SQLite)');
  }
  return lines.join('\n');
}

/**
 * Retrieval metrics over the evaluation's questions: recall@1, recall@5 and mean reciprocal rank (of the
 * first hit from the gold document within the top 5), overall, per language and per kind, and a Markdown
 * table of them. Unanswerable questions are left out of the metrics and reported on their own.
 */
import { LANGUAGES, KINDS, type Question } from './questions.js';

const languagesOf = (results: QuestionResult[]) => LANGUAGES.filter((language) => results.some((result) => result.question.language === language));

/** What the search returned for one question. */
export interface QuestionResult {
  question: Question;
  /** 1-based position of the first hit from the gold document, or null when none of the hits is from it. */
  rank: number | null;
  /** The hits as returned: title, url, source, score. */
  hits: { title: string; url: string | null; sourceId: string; score: number }[];
}

/** Metrics of a set of answerable questions. */
export interface Metrics { count: number; recallAt1: number; recallAt5: number; mrr: number }

/** Metrics of one retrieval mode ("full text", "hybrid"). */
export interface ModeReport {
  mode: string;
  overall: Metrics;
  byLanguage: Record<string, Metrics>;
  byKind: Record<string, Metrics>;
  /** Unanswerable questions: how many, how many got any hit, and the mean score of their best hit. */
  unanswerable: { count: number; withHits: number; meanTopScore: number | null };
  results: QuestionResult[];
}

/** recall@1, recall@5 and MRR (reciprocal rank, 0 when the gold is not in the top 5) of answerable results. */
export function metricsOf(results: QuestionResult[]): Metrics {
  const answerable = results.filter((result) => result.question.gold !== null);
  const count = answerable.length;
  if (count === 0) return { count: 0, recallAt1: 0, recallAt5: 0, mrr: 0 };
  const within = (k: number) => answerable.filter((result) => result.rank !== null && result.rank <= k).length / count;
  const mrr = answerable.reduce((sum, result) => sum + (result.rank !== null && result.rank <= 5 ? 1 / result.rank : 0), 0) / count;
  return { count, recallAt1: within(1), recallAt5: within(5), mrr };
}

/** The report of one mode: metrics overall, per language and per kind, and the unanswerable questions. */
export function reportOf(mode: string, results: QuestionResult[]): ModeReport {
  const slice = (keep: (result: QuestionResult) => boolean) => metricsOf(results.filter(keep));
  const unanswerable = results.filter((result) => result.question.gold === null);
  const withHits = unanswerable.filter((result) => result.hits.length > 0);
  return {
    mode,
    overall: metricsOf(results),
    byLanguage: Object.fromEntries(languagesOf(results).map((language) => [language, slice((result) => result.question.language === language)])),
    byKind: Object.fromEntries(KINDS.filter((kind) => kind !== 'unanswerable').map((kind) => [kind, slice((result) => result.question.kind === kind)])),
    unanswerable: {
      count: unanswerable.length,
      withHits: withHits.length,
      meanTopScore: withHits.length ? withHits.reduce((sum, result) => sum + (result.hits[0]?.score ?? 0), 0) / withHits.length : null,
    },
    results,
  };
}

/** The retrieval targets for full text alone, in every language of a fixture. */
export const TARGETS = { recallAt5: 0.9, mrr: 0.75 } as const;

/**
 * The languages (and "all") whose metrics miss the targets, as readable lines; empty when all are met.
 * perLanguage false: "all" only (the smoke subset is too small to judge a language by).
 */
export function targetMisses(report: ModeReport, options: { perLanguage: boolean } = { perLanguage: true }): string[] {
  const slices: [string, Metrics][] = [['all', report.overall], ...(options.perLanguage ? Object.entries(report.byLanguage) : [])];
  return slices
    .filter(([, metrics]) => metrics.count > 0 && (metrics.recallAt5 < TARGETS.recallAt5 || metrics.mrr < TARGETS.mrr))
    .map(([label, metrics]) => `${label}: recall@5 ${metrics.recallAt5.toFixed(3)}, MRR ${metrics.mrr.toFixed(3)}`);
}

const number = (value: number) => value.toFixed(3);

/** A Markdown table of the modes' metrics (one column group per mode), then the unanswerable line. */
export function markdownTable(reports: ModeReport[]): string {
  const header = `| Slice | n | ${reports.map((report) => `${report.mode} recall@1 | ${report.mode} recall@5 | ${report.mode} MRR`).join(' | ')} |`;
  const rule = `|---|---:|${reports.map(() => '---:|---:|---:').join('|')}|`;
  const [first] = reports;
  if (!first) return '';
  const rows: [string, (report: ModeReport) => Metrics][] = [
    ['all answerable', (report) => report.overall],
    ...Object.keys(first.byLanguage).map((language): [string, (report: ModeReport) => Metrics] => [`language: ${language}`, (report) => report.byLanguage[language]!]),
    ...Object.keys(first.byKind).map((kind): [string, (report: ModeReport) => Metrics] => [`kind: ${kind}`, (report) => report.byKind[kind]!]),
  ];
  const lines = rows.map(([label, pick]) => {
    const cells = reports.map((report) => {
      const metrics = pick(report);
      return `${number(metrics.recallAt1)} | ${number(metrics.recallAt5)} | ${number(metrics.mrr)}`;
    });
    return `| ${label} | ${pick(first).count} | ${cells.join(' | ')} |`;
  });
  const unanswerable = reports.map((report) => {
    const { count, withHits, meanTopScore } = report.unanswerable;
    return `${report.mode}: ${count} unanswerable questions, ${withHits} got hits (mean top score ${meanTopScore === null ? '—' : number(meanTopScore)})`;
  });
  return [header, rule, ...lines, '', ...unanswerable].join('\n');
}

/** The answerable questions whose gold document was not the first hit, with what came first instead. */
export function missLines(report: ModeReport): string[] {
  return report.results
    .filter((result) => result.question.gold !== null && result.rank !== 1)
    .map((result) => {
      const top = result.hits[0];
      const found = top ? `${top.title}${top.url ? ` <${top.url}>` : ''}` : 'no hits';
      return `${result.question.id} [${result.question.kind}] rank ${result.rank ?? '>5'}: ${result.question.question} → first: ${found}`;
    });
}

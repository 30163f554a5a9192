/**
 * The public benchmark's figures and Markdown tables: retrieval (R@1, R@5, MRR of the gold paragraph) beside
 * the BM25 baseline; replies (gold answer in the reply, or the gold paragraph linked; precision of `answered`
 * replies; the reply kinds on answerable and unanswerable questions); the targets, met or not.
 */
import { REPLY_KINDS, type ReplyKind } from '../ask.js';
import type { SquadResult } from './benchmark.js';

/** The figures of one slice of results (a language, or the articles that have unanswerable questions). */
export interface SquadSlice {
  answerable: number;
  unanswerable: number;
  retrieval: { recallAt1: number; recallAt5: number; mrr: number };
  bm25: { recallAt1: number; recallAt5: number; mrr: number };
  /** Answerable questions whose reply (any kind) contains a gold answer. */
  goldInReply: number;
  /** Answerable questions whose reply contains a gold answer or cites the gold paragraph. */
  goldInReplyOrLinked: number;
  /** Of all `answered` replies (answerable and unanswerable questions), those that contain a gold answer. */
  answeredPrecision: number;
  answeredCount: number;
  /** Share of each reply kind, on answerable and on unanswerable questions. */
  kindsAnswerable: Record<ReplyKind, number>;
  kindsUnanswerable: Record<ReplyKind, number>;
}

/** The acceptance targets on the English subset. */
export const SQUAD_TARGETS = { answeredPrecision: 0.85, goldInReplyOrLinked: 0.9, answeredGap: 0.15 } as const;

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

function rankMetrics(ranks: (number | null)[]) {
  const count = ranks.length;
  return {
    recallAt1: share(ranks.filter((rank) => rank === 1).length, count),
    recallAt5: share(ranks.filter((rank) => rank !== null && rank <= 5).length, count),
    mrr: share(ranks.reduce<number>((sum, rank) => sum + (rank ? 1 / rank : 0), 0), count),
  };
}

function kindShares(results: SquadResult[]): Record<ReplyKind, number> {
  return Object.fromEntries(REPLY_KINDS.map((kind) => [kind, share(results.filter((result) => result.kind === kind).length, results.length)])) as Record<ReplyKind, number>;
}

/** The figures of a set of results. */
export function squadSlice(results: SquadResult[]): SquadSlice {
  const answerable = results.filter((result) => result.question.answers !== null);
  const unanswerable = results.filter((result) => result.question.answers === null);
  const answered = results.filter((result) => result.kind === 'answered');
  return {
    answerable: answerable.length,
    unanswerable: unanswerable.length,
    retrieval: rankMetrics(answerable.map((result) => result.rank)),
    bm25: rankMetrics(answerable.map((result) => result.bm25Rank)),
    goldInReply: share(answerable.filter((result) => result.goldInReply).length, answerable.length),
    goldInReplyOrLinked: share(answerable.filter((result) => result.goldInReply || result.goldLinked).length, answerable.length),
    answeredPrecision: share(answered.filter((result) => result.goldInReply === true).length, answered.length),
    answeredCount: answered.length,
    kindsAnswerable: kindShares(answerable),
    kindsUnanswerable: kindShares(unanswerable),
  };
}

/** The slices the tables show: each language, and (English) the articles that have unanswerable questions. */
export function squadSlices(results: SquadResult[]): [string, SquadSlice][] {
  const languages = [...new Set(results.map((result) => result.question.language))];
  const withUnanswerable = new Set(results.filter((result) => result.question.answers === null).map((result) => result.question.article));
  return [
    ...languages.map((language): [string, SquadSlice] => [language, squadSlice(results.filter((result) => result.question.language === language))]),
    ...(withUnanswerable.size ? [[`en, articles with unanswerable questions (${withUnanswerable.size})`, squadSlice(results.filter((result) => withUnanswerable.has(result.question.article)))] as [string, SquadSlice]] : []),
  ];
}

const number = (value: number) => value.toFixed(3);
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

/** The Markdown tables of the slices: retrieval, replies, reply kinds. */
export function squadTables(slices: [string, SquadSlice][]): string {
  const retrieval = [
    '| Slice | answerable | R@1 | R@5 | MRR | BM25 R@1 | BM25 R@5 | BM25 MRR |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...slices.map(([name, slice]) => `| ${name} | ${slice.answerable} | ${number(slice.retrieval.recallAt1)} | ${number(slice.retrieval.recallAt5)} | ${number(slice.retrieval.mrr)} | ${number(slice.bm25.recallAt1)} | ${number(slice.bm25.recallAt5)} | ${number(slice.bm25.mrr)} |`),
  ];
  const replies = [
    '| Slice | answerable | gold answer in reply | gold answer or gold paragraph linked | `answered` replies | precision of `answered` | unanswerable |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...slices.map(([name, slice]) => `| ${name} | ${slice.answerable} | ${percent(slice.goldInReply)} | ${percent(slice.goldInReplyOrLinked)} | ${slice.answeredCount} | ${percent(slice.answeredPrecision)} | ${slice.unanswerable} |`),
  ];
  const shown = REPLY_KINDS.filter((kind) => slices.some(([, slice]) => slice.kindsAnswerable[kind] > 0 || slice.kindsUnanswerable[kind] > 0));
  const kinds = [
    `| Slice | questions | ${shown.map((kind) => `\`${kind}\``).join(' | ')} |`,
    `|---|---|${shown.map(() => '---:').join('|')}|`,
    ...slices.flatMap(([name, slice]) => [
      `| ${name} | answerable (${slice.answerable}) | ${shown.map((kind) => percent(slice.kindsAnswerable[kind])).join(' | ')} |`,
      ...(slice.unanswerable ? [`| ${name} | unanswerable (${slice.unanswerable}) | ${shown.map((kind) => percent(slice.kindsUnanswerable[kind])).join(' | ')} |`] : []),
    ]),
  ];
  return [...retrieval, '', ...replies, '', ...kinds].join('\n');
}

/** Each target on a slice, with whether it is met. */
export function squadTargetLines(slice: SquadSlice): { target: string; met: boolean }[] {
  const gap = slice.kindsAnswerable.answered - slice.kindsUnanswerable.answered;
  return [
    { target: `precision of \`answered\` ${percent(slice.answeredPrecision)} ≥ ${percent(SQUAD_TARGETS.answeredPrecision)}`, met: slice.answeredPrecision >= SQUAD_TARGETS.answeredPrecision },
    { target: `gold answer or gold paragraph linked ${percent(slice.goldInReplyOrLinked)} ≥ ${percent(SQUAD_TARGETS.goldInReplyOrLinked)}`, met: slice.goldInReplyOrLinked >= SQUAD_TARGETS.goldInReplyOrLinked },
    {
      target: `\`answered\` on unanswerable ${percent(slice.kindsUnanswerable.answered)}, at least 15 points below answerable ${percent(slice.kindsAnswerable.answered)} (gap ${(gap * 100).toFixed(1)})`,
      met: slice.unanswerable > 0 && gap >= SQUAD_TARGETS.answeredGap,
    },
    { target: `retrieval MRR ${number(slice.retrieval.mrr)} ≥ BM25 MRR ${number(slice.bm25.mrr)}`, met: slice.retrieval.mrr >= slice.bm25.mrr },
  ];
}

/** Examples of the failures the answerer should look at first, a few per class. */
export function squadMissLines(results: SquadResult[], perClass = 5): string[] {
  const line = (result: SquadResult) => {
    const gold = result.question.answers ? ` (gold: ${result.question.answers.slice(0, 2).join(' / ')}; ¶${result.question.paragraph + 1}, top hit ¶${result.topParagraph === null ? '—' : result.topParagraph + 1})` : '';
    return `  - ${result.question.article}: "${result.question.question}"${gold} → [${result.kind}] ${result.reply.replace(/\s+/g, ' ').slice(0, 220)}`;
  };
  const classes: [string, (result: SquadResult) => boolean][] = [
    ['answered, gold paragraph ranked first, no gold answer in the reply', (result) => result.kind === 'answered' && result.rank === 1 && result.goldInReply === false],
    ['answered from another paragraph than the gold one', (result) => result.kind === 'answered' && result.goldInReply === false && result.rank !== 1],
    ['answered on an unanswerable question', (result) => result.kind === 'answered' && result.question.answers === null],
    ['declined although the gold paragraph ranked first', (result) => result.kind !== 'answered' && result.rank === 1],
  ];
  return classes.flatMap(([name, keep]) => {
    const matching = results.filter(keep);
    return [`- ${name}: ${matching.length}`, ...matching.slice(0, perClass).map(line)];
  });
}

/**
 * The precision/coverage curve of answering only above a confidence threshold (the first hit's `confidence`):
 * per threshold, the share of all questions that would be answered, and of those, the share whose reply holds a
 * gold answer. Empty until knowledge/search returns a `confidence` per hit.
 */
export function squadConfidenceCurve(results: SquadResult[], thresholds = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]): string {
  if (!results.some((result) => result.topConfidence !== null)) return '';
  const rows = thresholds.map((threshold) => {
    const covered = results.filter((result) => (result.topConfidence ?? 0) >= threshold);
    const right = covered.filter((result) => result.goldInReply === true).length;
    const unanswerable = covered.filter((result) => result.question.answers === null).length;
    return `| ${threshold.toFixed(1)} | ${percent(share(covered.length, results.length))} | ${percent(share(right, covered.length))} | ${unanswerable} |`;
  });
  return ['| confidence ≥ | coverage (all questions) | precision (gold answer in reply) | unanswerable covered |', '|---:|---:|---:|---:|', ...rows].join('\n');
}

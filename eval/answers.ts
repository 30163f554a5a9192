/**
 * The answer evaluation: every question of a business fixture, and its small-talk and handoff turns, asked of
 * the agent through the reply engine the service runs (eval/ask.ts), each as the only visitor message of a
 * conversation. Scores: for answerable questions, whether the reply is `answered` and states the gold fact (the
 * question's `fact`, or its `answer` quote, compared folded) and cites the gold document; for out-of-scope
 * ones, whether the reply declines (`unanswered`) or only offers best matches (`best_matches`); for the
 * conversational turns, whether the agent answers with the expected kind of turn; reply length in words.
 */
import type { LlmConfig } from '../src/config.js';
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { createAsker, engineLabel, replyKind, type ReplyKind } from './ask.js';
import type { Question } from './questions.js';

/** A small-talk or handoff turn and what it should be answered as. */
export interface ConversationTurn { text: string; language: string; expect: 'conversational' | 'handoff' }

/** What the agent said to one question or turn, and how it scored. */
export interface AnswerResult {
  id: string;
  language: string;
  kind: string;
  question: string;
  answer: string;
  outcome: ReplyKind;
  sources: { source_id: string; url: string | null }[];
  factStated: boolean | null;
  sourceCited: boolean | null;
  declined: boolean | null;
  handled: boolean | null;
  /** Whether the pieces streamed while answering add up to the stored answer. */
  streamed: boolean;
}

/** Rates per slice, as fractions. */
export interface AnswerSlice {
  answerable: number;
  factStated: number;
  sourceCitedOfStated: number;
  unanswerable: number;
  declined: number;
  /** Out-of-scope questions answered (`answered`) anyway. */
  answeredOutOfScope: number;
  turns: number;
  handled: number;
  medianWords: number;
  /** Answers whose streamed pieces add up to the answer. */
  streamed: number;
}

export interface AnswerReport {
  /** The provider and model that answered, e.g. `builtin`, `openai:gpt-4o-mini`. */
  provider: string;
  overall: AnswerSlice;
  byLanguage: Record<string, AnswerSlice>;
  results: AnswerResult[];
}

/** The targets for the builtin provider, on every business fixture. */
export const ANSWER_TARGETS = { factStated: 0.85, sourceCited: 0.9, declined: 0.95, handled: 1, medianWords: 60, languageGap: 0.1 };

/** The kinds of reply that count as declining an out-of-scope question. */
const DECLINES: readonly ReplyKind[] = ['unanswered', 'best_matches'];

/** Lowercased, accents folded, punctuation and extra spaces gone: how a quote is looked for in an answer. */
export function folded(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function sliceOf(results: AnswerResult[]): AnswerSlice {
  const answerable = results.filter((result) => result.factStated !== null);
  const stated = answerable.filter((result) => result.factStated);
  const unanswerable = results.filter((result) => result.declined !== null);
  const turns = results.filter((result) => result.handled !== null);
  const rate = (part: number, whole: number) => (whole === 0 ? 1 : part / whole);
  return {
    answerable: answerable.length,
    factStated: rate(stated.length, answerable.length),
    sourceCitedOfStated: rate(stated.filter((result) => result.sourceCited).length, stated.length),
    unanswerable: unanswerable.length,
    declined: rate(unanswerable.filter((result) => result.declined).length, unanswerable.length),
    answeredOutOfScope: unanswerable.filter((result) => result.outcome === 'answered').length,
    turns: turns.length,
    handled: rate(turns.filter((result) => result.handled).length, turns.length),
    medianWords: median(answerable.filter((result) => result.outcome === 'answered').map((result) => words(result.answer))),
    streamed: rate(results.filter((result) => result.streamed).length, results.length),
  };
}

/**
 * Asks every question and turn of the agent through a reply engine over the service's database (the builtin
 * provider, or the model provider `llm` configures), `isGold` telling whether a cited source is the
 * question's gold document.
 */
export async function evaluateAnswers(options: {
  db: Kysely<Database>;
  workspaceId: string;
  chatbotId: string;
  questions: Question[];
  turns: ConversationTurn[];
  isGold: (question: Question, source: { source_id: string; url: string | null }) => boolean;
  /** The provider to answer with (LLM_PROVIDER, …); the builtin one by default. */
  llm?: LlmConfig;
}): Promise<AnswerReport> {
  const ask = createAsker(options.db, options.workspaceId, options.llm);
  const results: AnswerResult[] = [];
  for (const question of options.questions) {
    const reply = await ask(options.chatbotId, question.question);
    const kind = replyKind(reply);
    const answerable = question.gold !== null;
    const fact = question.fact ?? question.answer ?? '';
    results.push({
      id: question.id, language: question.language, kind: question.kind, question: question.question, answer: reply.content, outcome: kind, sources: reply.sources,
      factStated: answerable ? kind === 'answered' && folded(reply.content).includes(folded(fact)) : null,
      sourceCited: answerable ? reply.sources.some((source) => options.isGold(question, source)) : null,
      declined: answerable ? null : DECLINES.includes(kind),
      handled: null,
      streamed: reply.streamed,
    });
  }
  for (const [index, turn] of options.turns.entries()) {
    const reply = await ask(options.chatbotId, turn.text);
    const kind = replyKind(reply);
    results.push({
      id: `turn-${index + 1}`, language: turn.language, kind: turn.expect, question: turn.text, answer: reply.content, outcome: kind, sources: reply.sources,
      factStated: null, sourceCited: null, declined: null, handled: kind === turn.expect && reply.sources.length === 0, streamed: reply.streamed,
    });
  }
  const languages = [...new Set(results.map((result) => result.language))];
  return {
    provider: engineLabel(options.llm ?? { provider: 'builtin' } as LlmConfig),
    overall: sliceOf(results),
    byLanguage: Object.fromEntries(languages.map((language) => [language, sliceOf(results.filter((result) => result.language === language))])),
    results,
  };
}

/** The answer table for docs/evaluation.md: each fixture's rows (all, then each language) side by side. */
export function answerTable(reports: [string, AnswerReport][]): string {
  const percent = (value: number) => `${Math.round(value * 1000) / 10} %`;
  const row = (fixture: string, name: string, slice: AnswerSlice) =>
    `| ${fixture} | ${name} | ${slice.answerable} | ${percent(slice.factStated)} | ${percent(slice.sourceCitedOfStated)} | ${slice.unanswerable} | ${percent(slice.declined)} | ${slice.answeredOutOfScope} | ${slice.turns} | ${percent(slice.handled)} | ${slice.medianWords} |`;
  return [
    '| Fixture | Slice | answerable | gold fact stated | gold source cited (of stated) | out of scope | declined or best matches | out of scope `answered` | small talk + handoff | handled | median words |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...reports.flatMap(([fixture, report]) => [
      row(fixture, 'all', report.overall),
      ...Object.entries(report.byLanguage).map(([language, slice]) => row(fixture, language, slice)),
    ]),
  ].join('\n');
}

/** The targets the report misses (empty when all are met). */
export function answerTargetMisses(report: AnswerReport): string[] {
  const misses: string[] = [];
  const { overall } = report;
  if (overall.factStated < ANSWER_TARGETS.factStated) misses.push(`gold fact stated ${overall.factStated.toFixed(3)} < ${ANSWER_TARGETS.factStated}`);
  if (overall.sourceCitedOfStated < ANSWER_TARGETS.sourceCited) misses.push(`gold source cited ${overall.sourceCitedOfStated.toFixed(3)} < ${ANSWER_TARGETS.sourceCited}`);
  if (overall.declined < ANSWER_TARGETS.declined) misses.push(`declined ${overall.declined.toFixed(3)} < ${ANSWER_TARGETS.declined}`);
  if (overall.handled < ANSWER_TARGETS.handled) misses.push(`small talk and handoff handled ${overall.handled.toFixed(3)} < 1`);
  if (overall.medianWords >= ANSWER_TARGETS.medianWords) misses.push(`median answer ${overall.medianWords} words ≥ ${ANSWER_TARGETS.medianWords}`);
  const english = report.byLanguage.en;
  for (const [language, slice] of Object.entries(report.byLanguage)) {
    if (language === 'en' || !english) continue;
    if (english.factStated - slice.factStated > ANSWER_TARGETS.languageGap) misses.push(`${language}: gold fact stated ${slice.factStated.toFixed(3)}, more than 10 points under English`);
  }
  return misses;
}

/**
 * The answer evaluation (issue 31): every fixture question, and a set of small-talk and handoff turns, asked
 * of the builtin reply engine the service runs (in process, each as the only visitor message of a
 * conversation with the fixture agent). Scores: for answerable questions, whether the answer states the gold
 * fact (the question's `answer` quote, compared folded) and cites the gold document; for unanswerable ones,
 * whether it declines (no source, the outcome `unanswered`); for the conversational turns, whether the
 * agent answers with the expected kind of turn; answer length in words.
 */
import fs from 'node:fs';
import type { Kysely } from 'kysely';
import { loadConfig, type LlmConfig } from '../src/config.js';
import type { Database } from '../src/db/schema.js';
import { createKnowledgeSearch } from '../src/modules/knowledge/retrieval.js';
import { createReplyEngine, type ReplyOutput } from '../src/modules/replies/index.js';
import type { ReplyInput } from '../src/modules/replies/engine.js';
import { LANGUAGES, type Question } from './questions.js';

/** A small-talk or handoff turn and what it should be answered as. */
export interface ConversationTurn { text: string; language: string; expect: 'conversational' | 'handoff' }

/** What the agent said to one question or turn, and how it scored. */
export interface AnswerResult {
  id: string;
  language: string;
  kind: string;
  question: string;
  answer: string;
  outcome: ReplyOutput['outcome'];
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

/** Issue 31's targets for the builtin provider. */
export const ANSWER_TARGETS = { factStated: 0.85, sourceCited: 0.9, declined: 0.95, handled: 1, medianWords: 60, languageGap: 0.1 };

export function loadTurns(): ConversationTurn[] {
  return JSON.parse(fs.readFileSync(new URL('./conversation-turns.json', import.meta.url), 'utf8')) as ConversationTurn[];
}

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
  const { db, workspaceId, chatbotId } = options;
  const llm = options.llm ?? loadConfig({}).llm;
  const engine = createReplyEngine({ db, llm, logger: { warn: () => {}, info: () => {} }, knowledge: createKnowledgeSearch(null, { warn: () => {} }) });
  const chatbot = await db.selectFrom('chatbots').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', chatbotId).executeTakeFirstOrThrow();
  const ask = async (text: string) => {
    const at = new Date().toISOString();
    const message = { id: 'msg_eval', workspace_id: workspaceId, conversation_id: 'conv_eval', chatbot_id: chatbotId, role: 'user', content: text, author_type: 'visitor', author_id: null, created_at: at };
    let deltas: string[] = [];
    const output = await engine.reply({
      workspaceId, chatbot, transcript: [message] as unknown as ReplyInput['transcript'],
      onDelta: (delta) => deltas.push(delta), onReset: () => (deltas = []),
    });
    return { ...output, streamed: deltas.join('') === output.content };
  };
  const results: AnswerResult[] = [];
  for (const question of options.questions) {
    const output = await ask(question.question);
    const sources = output.sources.map((source) => ({ source_id: source.source_id, url: source.url }));
    const answerable = question.gold !== null;
    const factStated = answerable ? output.outcome === 'answered' && folded(output.content).includes(folded(question.answer ?? '')) : null;
    results.push({
      id: question.id, language: question.language, kind: question.kind, question: question.question, answer: output.content, outcome: output.outcome, sources,
      factStated,
      sourceCited: answerable ? sources.some((source) => options.isGold(question, source)) : null,
      declined: answerable ? null : output.outcome === 'unanswered' && sources.length === 0,
      handled: null,
      streamed: output.streamed,
    });
  }
  options.turns.forEach((turn, index) => results.push({ id: `turn-${index + 1}`, language: turn.language, kind: turn.expect, question: turn.text, answer: '', outcome: 'failed', sources: [], factStated: null, sourceCited: null, declined: null, handled: null, streamed: false }));
  for (const result of results.filter((entry) => entry.id.startsWith('turn-'))) {
    const output = await ask(result.question);
    result.answer = output.content;
    result.outcome = output.outcome;
    result.handled = output.outcome === result.kind && output.sources.length === 0;
    result.streamed = output.streamed;
  }
  return {
    provider: engineLabel(llm),
    overall: sliceOf(results),
    byLanguage: Object.fromEntries(LANGUAGES.map((language) => [language, sliceOf(results.filter((result) => result.language === language))])),
    results,
  };
}

const engineLabel = (llm: LlmConfig) => (llm.provider === 'builtin' ? 'builtin' : `${llm.provider}:${llm.model}`);

/** The answer table for docs/evaluation.md. */
export function answerTable(report: AnswerReport): string {
  const percent = (value: number) => `${Math.round(value * 1000) / 10} %`;
  const row = (name: string, slice: AnswerSlice) =>
    `| ${name} | ${slice.answerable} | ${percent(slice.factStated)} | ${percent(slice.sourceCitedOfStated)} | ${slice.unanswerable} | ${percent(slice.declined)} | ${slice.turns} | ${percent(slice.handled)} | ${slice.medianWords} |`;
  return [
    '| Slice | answerable | gold fact stated | gold source cited (of stated) | unanswerable | declined | small talk + handoff | handled | median words |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('all', report.overall),
    ...Object.entries(report.byLanguage).map(([language, slice]) => row(`language: ${language}`, slice)),
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

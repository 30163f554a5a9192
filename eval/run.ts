/**
 * The business part of the evaluation: for each business fixture (eval/fixtures.ts), the real service, built
 * in-process on a fresh database, learns the business through its public API exactly as a client would (a
 * website source crawled from a local server, a PDF and a DOCX uploaded as multipart files, Q&A and text
 * sources); then every question is asked of GET /api/v1/chatbots/{id}/knowledge/search and the hits are
 * matched to the question's gold, and (full text) every question and turn is answered by the reply engine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LlmConfig } from '../src/config.js';
import { startOpenAiServer } from '../test/helpers/openai-server.js';
import { loadWordVectorEmbedding } from './word-vectors.js';
import { makeDocuments } from './fixture/make-documents.js';
import { serveFixtureSite } from './fixture/site-server.js';
import { evaluateAnswers, type AnswerReport } from './answers.js';
import { businessFixtures, type BusinessFixture } from './fixtures.js';
import { reportOf, type ModeReport, type QuestionResult } from './metrics.js';
import { normalisePagePath, type Question } from './questions.js';
import { expectStatus, listAll, startEvalService, waitForSources, without, type SourceView } from './service.js';

/** The retrieval modes: full text always; hybrid when an embeddings provider is configured. */
export const FULL_TEXT = 'full text';
export const HYBRID = 'hybrid';

/** How to run the evaluation. */
export interface EvalOptions {
  /** The smoke questions of the fixtures that name some (the bike shop's 15), full text alone, no answers. */
  smoke?: boolean;
  /** Skip the hybrid pass (full text and the answers only). */
  noHybrid?: boolean;
  /** The fixtures to run (all by default). */
  fixtures?: BusinessFixture[];
  /**
   * The environment the service is configured from (database, EMBEDDINGS_*, …); the database, listen
   * address, rate limits and OUTBOUND_ALLOW_PRIVATE_HOSTS are set by the run itself.
   */
  env?: Record<string, string | undefined>;
  /** Longest wait for every source to be ready or failed. */
  ingestTimeoutMs?: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** What one mode's run of one fixture ingested, and how retrieval scored. */
export interface ModeRun {
  /** The fixture's key (`spokesmith`, `larkfield`). */
  fixture: string;
  report: ModeReport;
  sources: SourceView[];
  /** The website source's documents (URL path, status, error), to check the crawl (robots.txt exclusions, coverage). */
  websiteDocuments: { path: string; status: string; error: string | null }[];
  /** Every path the fixture site served, in order. */
  siteRequests: string[];
  ingestSeconds: number;
  /** The builtin provider's answers (full text only, and not in the smoke run). */
  answers: AnswerReport | null;
  /** The answers of the model provider the environment configures (LLM_PROVIDER), full text only; null when none is. */
  modelAnswers: AnswerReport | null;
}

const EMBEDDINGS_VARIABLES = ['EMBEDDINGS_PROVIDER', 'EMBEDDINGS_BASE_URL', 'EMBEDDINGS_MODEL', 'EMBEDDINGS_API_KEY'];

/** The model name the local embeddings server answers for. */
export const LOCAL_EMBEDDINGS_MODEL = 'local-word-vectors-100d';

/** True when the environment configures an embeddings provider (hybrid retrieval). */
export function embeddingsConfigured(env: Record<string, string | undefined>): boolean {
  return Boolean(env.EMBEDDINGS_PROVIDER?.trim());
}

/**
 * Runs the evaluation of each fixture: full text alone, then hybrid retrieval, through the embeddings provider
 * the environment configures or, when none is, a local OpenAI-compatible /embeddings server over English word
 * vectors (eval/word-vectors.ts). The smoke run measures full text alone, on the fixtures that name smoke questions.
 */
export async function runEvaluation(options: EvalOptions = {}): Promise<ModeRun[]> {
  const env = options.env ?? {};
  const fixtures = (options.fixtures ?? businessFixtures()).filter((fixture) => !options.smoke || fixture.smokeQuestionIds.length > 0);
  const runs: ModeRun[] = [];
  for (const fixture of fixtures) runs.push(await runMode(fixture, FULL_TEXT, without(env, EMBEDDINGS_VARIABLES), options));
  if (options.smoke || options.noHybrid) return runs;
  if (embeddingsConfigured(env)) {
    for (const fixture of fixtures) runs.push(await runMode(fixture, HYBRID, env, options));
    return runs;
  }
  options.log?.('[hybrid] loading the word vectors of the local embeddings server');
  const server = await startOpenAiServer(undefined, { embed: loadWordVectorEmbedding() });
  try {
    const local = { ...env, EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: LOCAL_EMBEDDINGS_MODEL };
    for (const fixture of fixtures) runs.push(await runMode(fixture, HYBRID, local, options));
    const embedded = server.requests.filter((request) => request.path === '/v1/embeddings').length;
    if (embedded === 0) throw new Error('hybrid run: the local embeddings server received no request');
  } finally {
    await server.close();
  }
  return runs;
}

async function runMode(fixture: BusinessFixture, mode: string, env: Record<string, string | undefined>, options: EvalOptions): Promise<ModeRun> {
  const log = (line: string) => options.log?.(`[${fixture.key} ${mode}] ${line}`);
  const documentsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-agent-eval-documents-'));
  const site = await serveFixtureSite({ root: fixture.siteDir });
  const service = await startEvalService(env);
  try {
    const { call, app, workspaceId } = service;
    const agent = await expectStatus<{ id: string }>(call, 201, 'POST', '/api/v1/chatbots', fixture.agent);
    const sourcesUrl = `/api/v1/chatbots/${agent.id}/sources`;

    log(`adding sources (site at ${site.origin})`);
    const started = Date.now();
    const goldSources = new Map<string, string>(); // gold key → source id
    const website = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, { type: 'website', url: `${site.origin}${fixture.startPath}`, crawl: { max_pages: 100 } });
    for (const document of await makeDocuments(documentsDir, fixture.documents, fixture.documentsDir)) {
      const form = new FormData();
      form.append('title', document.title);
      form.append('file', new Blob([fs.readFileSync(document.path)], { type: document.mediaType }), document.name);
      const source = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, form);
      goldSources.set(`file:${document.name}`, source.id);
    }
    for (const pair of fixture.qaPairs) {
      const source = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, { type: 'qa', question: pair.question, answer: pair.answer });
      goldSources.set(`qa:${pair.question}`, source.id);
    }
    for (const text of fixture.textSources) {
      const source = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, { type: 'text', ...text });
      goldSources.set(`text:${text.title}`, source.id);
    }

    const sources = await waitForSources(call, sourcesUrl, options.ingestTimeoutMs ?? 600_000, log);
    const ingestSeconds = (Date.now() - started) / 1000;
    const websiteDocuments = (await listAll<{ url: string | null; status: string; error: string | null }>(call, `${sourcesUrl}/${website.id}/documents`))
      .map((document) => ({ path: document.url ? new URL(document.url).pathname : '', status: document.status, error: document.error }))
      .sort((a, b) => a.path.localeCompare(b.path));
    log(`ingested in ${ingestSeconds.toFixed(1)} s: ${sources.map((source) => `${source.type} ${source.status} (${source.stats.documents} documents, ${source.stats.chunks} chunks)`).join('; ')}`);

    const questions = selectQuestions(fixture, options.smoke ?? false);
    const results: QuestionResult[] = [];
    for (const question of questions) {
      const found = await expectStatus<{ data: { source_id: string; title: string; url: string | null; score: number }[] }>(
        call, 200, 'GET', `/api/v1/chatbots/${agent.id}/knowledge/search?q=${encodeURIComponent(question.question)}&limit=5`,
      );
      const hits = found.data.map((hit) => ({ title: hit.title, url: hit.url, sourceId: hit.source_id, score: hit.score }));
      const index = hits.findIndex((hit) => matchesGold(question, hit, website.id, goldSources));
      results.push({ question, rank: index === -1 ? null : index + 1, hits });
    }
    const answersOf = (llm?: LlmConfig) => evaluateAnswers({
      db: app.database.db, workspaceId, chatbotId: agent.id, questions, turns: fixture.turns, llm,
      isGold: (question, source) => matchesGold(question, { sourceId: source.source_id, url: source.url }, website.id, goldSources),
    });
    const answers = mode === FULL_TEXT && !options.smoke ? await answersOf() : null;
    const modelAnswers = mode === FULL_TEXT && service.config.llm.provider !== 'builtin' ? await answersOf(service.config.llm) : null;
    return { fixture: fixture.key, report: reportOf(mode, results), sources, websiteDocuments, siteRequests: [...site.requests], ingestSeconds, answers, modelAnswers };
  } finally {
    await service.close();
    await site.close();
    fs.rmSync(documentsDir, { recursive: true, force: true });
  }
}

/** A fixture's questions, or its smoke subset in its listed order. */
export function selectQuestions(fixture: BusinessFixture, smoke: boolean): Question[] {
  if (!smoke) return fixture.questions;
  return fixture.smokeQuestionIds.map((id) => {
    const question = fixture.questions.find((candidate) => candidate.id === id);
    if (!question) throw new Error(`smoke question ${id} is not a question of ${fixture.key}`);
    return question;
  });
}

/** Whether a hit comes from the question's gold document. */
function matchesGold(question: Question, hit: { sourceId: string; url: string | null }, websiteSourceId: string, goldSources: Map<string, string>): boolean {
  const gold = question.gold;
  if (!gold) return false;
  if (gold.type === 'page') {
    return hit.sourceId === websiteSourceId && hit.url !== null && normalisePagePath(new URL(hit.url).pathname) === normalisePagePath(gold.path);
  }
  const key = gold.type === 'file' ? `file:${gold.name}` : gold.type === 'qa' ? `qa:${gold.question}` : `text:${gold.title}`;
  return hit.sourceId === goldSources.get(key);
}

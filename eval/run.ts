/**
 * The retrieval evaluation (issue 30 point 8): the real service, built in-process on a fresh database, learns
 * the fixture business through its public API exactly as a client would (a website source crawled from a
 * local server, a PDF and a DOCX uploaded as multipart files, Q&A and text sources), then every question is
 * asked of GET /api/v1/chatbots/{id}/knowledge/search and the hits are matched to the question's gold.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig, type LlmConfig } from '../src/config.js';
import { SCOPES } from '../src/http/scopes.js';
import { systemContext } from '../src/lib/actor.js';
import { dropDatabase, freshDatabaseEnv } from '../test/helpers/database.js';
import { startOpenAiServer } from '../test/helpers/openai-server.js';
import { loadWordVectorEmbedding } from './word-vectors.js';
import { makeDocuments } from './fixture/make-documents.js';
import { serveFixtureSite } from './fixture/site-server.js';
import { evaluateAnswers, loadTurns, type AnswerReport } from './answers.js';
import { reportOf, type ModeReport, type QuestionResult } from './metrics.js';
import { loadQaPairs, loadQuestions, loadTextSource, normalisePagePath, SMOKE_QUESTION_IDS, type Question } from './questions.js';

/** The retrieval modes: full text always; hybrid when an embeddings provider is configured. */
export const FULL_TEXT = 'full text';
export const HYBRID = 'hybrid';

/** How to run the evaluation. */
export interface EvalOptions {
  /** The 15 smoke questions instead of all of them. */
  smoke?: boolean;
  /** Skip the hybrid pass (full text and the answers only). */
  noHybrid?: boolean;
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

/** A source as the API presents it (the fields the evaluation reads). */
export interface SourceView {
  id: string;
  type: string;
  title: string | null;
  url: string | null;
  status: string;
  error: string | null;
  stats: { documents: number; chunks: number; failed_documents: number };
}

/** What one mode's run ingested, and how retrieval scored. */
export interface ModeRun {
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
/** The run chooses its own fresh database (a temp SQLite file, or a schema of TEST_DATABASE_URL). */
const DATABASE_VARIABLES = ['DATABASE_URL', 'DATABASE_SCHEMA', 'REDIS_URL'];

const without = (env: Record<string, string | undefined>, names: string[]) => Object.fromEntries(Object.entries(env).filter(([name]) => !names.includes(name)));

/** The model name the local embeddings server answers for. */
export const LOCAL_EMBEDDINGS_MODEL = 'local-word-vectors-100d';

/** True when the environment configures an embeddings provider (hybrid retrieval). */
export function embeddingsConfigured(env: Record<string, string | undefined>): boolean {
  return Boolean(env.EMBEDDINGS_PROVIDER?.trim());
}

/**
 * Runs the evaluation: full text alone, then hybrid retrieval, through the embeddings provider the
 * environment configures or, when none is, a local OpenAI-compatible /embeddings server over English word
 * vectors (eval/word-vectors.ts). The smoke run measures full text alone.
 */
export async function runEvaluation(options: EvalOptions = {}): Promise<ModeRun[]> {
  const env = without(options.env ?? {}, DATABASE_VARIABLES);
  const runs = [await runMode(FULL_TEXT, without(env, EMBEDDINGS_VARIABLES), options)];
  if (options.smoke || options.noHybrid) return runs;
  if (embeddingsConfigured(env)) {
    runs.push(await runMode(HYBRID, env, options));
    return runs;
  }
  options.log?.('[hybrid] loading the word vectors of the local embeddings server');
  const server = await startOpenAiServer(undefined, { embed: loadWordVectorEmbedding() });
  try {
    const local = { ...env, EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: LOCAL_EMBEDDINGS_MODEL };
    runs.push(await runMode(HYBRID, local, options));
    const embedded = server.requests.filter((request) => request.path === '/v1/embeddings').length;
    if (embedded === 0) throw new Error('hybrid run: the local embeddings server received no request');
  } finally {
    await server.close();
  }
  return runs;
}

/** A client of the service's public API over HTTP, with one bearer key. */
function apiClient(baseUrl: string, key: string) {
  return async function call<T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
    const isForm = body instanceof FormData;
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && !isForm ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: isForm ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };
}

type Call = ReturnType<typeof apiClient>;

/** Sends a request that must answer `expected`, or throws with the problem the service sent. */
async function expectStatus<T>(call: Call, expected: number, method: string, url: string, body?: unknown): Promise<T> {
  const response = await call<T>(method, url, body);
  if (response.status !== expected) throw new Error(`${method} ${url}: expected ${expected}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Every item of a cursor-paginated list. */
async function listAll<T>(call: Call, url: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = url.includes('?') ? '&' : '?';
    const page: { data: T[]; next_cursor: string | null } = await expectStatus(call, 200, 'GET', `${url}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

async function runMode(mode: string, env: Record<string, string | undefined>, options: EvalOptions): Promise<ModeRun> {
  const log = options.log ?? (() => {});
  const databaseEnv = freshDatabaseEnv();
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    ...env,
    ...databaseEnv,
    HOST: '127.0.0.1',
    PORT: '0',
    OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true',
    RATE_LIMIT_KEY_PER_MINUTE: '1000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
  });
  const documentsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-agent-eval-documents-'));
  const site = await serveFixtureSite();
  const app = await buildApp(config);
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const workspace = await app.services.workspaces.create('Evaluation', 'eval');
    const { secret } = await app.services.apiKeys.create(systemContext(workspace.id, 'eval'), { name: 'evaluation', scopes: [...SCOPES] });
    const call = apiClient(baseUrl, secret);
    const agent = await expectStatus<{ id: string }>(call, 201, 'POST', '/api/v1/chatbots', {
      name: 'Spokesmith Cycles assistant',
      instructions: 'Answer questions about Spokesmith Cycles from its knowledge.',
    });
    const sourcesUrl = `/api/v1/chatbots/${agent.id}/sources`;

    log(`[${mode}] adding sources (site at ${site.origin})`);
    const started = Date.now();
    const goldSources = new Map<string, string>(); // gold key → source id
    const website = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, { type: 'website', url: `${site.origin}/index.html`, crawl: { max_pages: 100 } });
    for (const document of await makeDocuments(documentsDir)) {
      const form = new FormData();
      form.append('title', document.title);
      form.append('file', new Blob([fs.readFileSync(document.path)], { type: document.mediaType }), document.name);
      const source = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, form);
      goldSources.set(`file:${document.name}`, source.id);
    }
    for (const pair of loadQaPairs()) {
      const source = await expectStatus<SourceView>(call, 201, 'POST', sourcesUrl, { type: 'qa', question: pair.question, answer: pair.answer });
      goldSources.set(`qa:${pair.question}`, source.id);
    }
    await expectStatus(call, 201, 'POST', sourcesUrl, { type: 'text', ...loadTextSource() });

    const sources = await waitForSources(call, sourcesUrl, options.ingestTimeoutMs ?? 600_000, (line) => log(`[${mode}] ${line}`));
    const ingestSeconds = (Date.now() - started) / 1000;
    const websiteDocuments = (await listAll<{ url: string | null; status: string; error: string | null }>(call, `${sourcesUrl}/${website.id}/documents`))
      .map((document) => ({ path: document.url ? new URL(document.url).pathname : '', status: document.status, error: document.error }))
      .sort((a, b) => a.path.localeCompare(b.path));
    log(`[${mode}] ingested in ${ingestSeconds.toFixed(1)} s: ${sources.map((source) => `${source.type} ${source.status} (${source.stats.documents} documents, ${source.stats.chunks} chunks)`).join('; ')}`);

    const questions = selectQuestions(options.smoke ?? false);
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
      db: app.database.db, workspaceId: workspace.id, chatbotId: agent.id, questions, turns: loadTurns(), llm,
      isGold: (question, source) => matchesGold(question, { sourceId: source.source_id, url: source.url }, website.id, goldSources),
    });
    const answers = mode === FULL_TEXT && !options.smoke ? await answersOf() : null;
    const modelAnswers = mode === FULL_TEXT && config.llm.provider !== 'builtin' ? await answersOf(config.llm) : null;
    return { report: reportOf(mode, results), sources, websiteDocuments, siteRequests: [...site.requests], ingestSeconds, answers, modelAnswers };
  } finally {
    await app.close();
    await site.close();
    await dropDatabase(databaseEnv);
    fs.rmSync(documentsDir, { recursive: true, force: true });
  }
}

/** All questions, or the smoke subset in its listed order. */
export function selectQuestions(smoke: boolean): Question[] {
  const questions = loadQuestions();
  if (!smoke) return questions;
  return SMOKE_QUESTION_IDS.map((id) => {
    const question = questions.find((candidate) => candidate.id === id);
    if (!question) throw new Error(`smoke question ${id} is not in eval/questions.json`);
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
  const key = gold.type === 'file' ? `file:${gold.name}` : `qa:${gold.question}`;
  return hit.sourceId === goldSources.get(key);
}

/** Polls the source list until every source is ready or failed (or the time is up: throws). */
async function waitForSources(call: Call, sourcesUrl: string, timeoutMs: number, log: (line: string) => void): Promise<SourceView[]> {
  const deadline = Date.now() + timeoutMs;
  let lastLine = '';
  for (;;) {
    const sources = await listAll<SourceView>(call, sourcesUrl);
    const pending = sources.filter((source) => source.status !== 'ready' && source.status !== 'failed');
    if (pending.length === 0) return sources;
    const line = `waiting for ${pending.length} of ${sources.length} sources: ${pending.map((source) => `${source.type} ${source.status} ${source.stats.documents} documents`).join(', ')}`;
    if (line !== lastLine) log(line);
    lastLine = line;
    if (Date.now() > deadline) throw new Error(`sources not ready after ${timeoutMs / 1000} s: ${line}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

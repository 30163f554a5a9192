import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { knowledgeChunks } from '../src/modules/knowledge/chunks.js';
import { createBenchAgent, type BenchAgent } from './agent-chunks.js';
import { benchDatabaseEnv, dropBenchDatabase, settle, type Backend } from './databases.js';
import { repliesTable } from './report.js';
import { percentile, syntheticText } from './text.js';

// Reply latency of the builtin provider (issue 31). `npm run bench` runs it (`--only replies`); on its own:
// `npx tsx bench/replies.ts [--db sqlite|postgres] [--sizes 1000,10000,100000] [--queries 200]`. It builds the
// app with buildApp as a deployment runs it (LLM_PROVIDER builtin, no embeddings, limits raised so they never
// refuse; on PostgreSQL with Redis), fills one active agent with synthetic chunks (bench/agent-chunks.ts), and
// for each question, in a conversation of its own whose creation is not timed, times the widget POST of the
// visitor's message until its response carries the stored answer: the message and its reply job committed,
// retrieval, composing the answer, storing it. The same questions also go through knowledgeChunks.search
// alone (what the answer retrieves: limit 5), alternating with the replies, so that the ratio of the two
// meets the same moments of a shared machine and neither always finds the other's pages warm. Not part of `npm test`.

/** One size of the agent's chunk set: latencies in ms. */
export interface RepliesRow {
  chunks: number;
  /** Widget POST of the message → 201 carrying the stored answer. */
  reply: { p50: number; p99: number };
  /** knowledgeChunks.search alone for the same questions (the retrieval inside the answer). */
  search: { p50: number; p99: number };
  /** reply p50 / search p50, measured in the same run. */
  ratio: number;
  /** Answers that quoted the agent's knowledge (the rest said "I don't know" or were small talk). */
  answered: number;
}

/** Reply latency on one database, as `npm run bench` saves it. */
export interface RepliesReport {
  backend: Backend;
  queries: number;
  warmup: number;
  rows: RepliesRow[];
  /** Issue 31's target for the p50 at the largest size (SQLite only; null on PostgreSQL). */
  target: { chunks: number; p50Ms: number; pass: boolean } | null;
}

/** Issue 31: reply p50 at 100,000 chunks on SQLite. PostgreSQL has none: the issue sets it for the embedded shape. */
const P50_TARGET_MS = 50;
const TARGET_CHUNKS = 100_000;
/** Chunks the builtin provider retrieves for an answer (ANSWER_HITS of src/modules/replies/builtin.ts). */
const ANSWER_HITS = 5;

/** Pino's levels warn (40), error (50) and fatal (60). */
const WARNING = /"level":[456]0\b/;

/**
 * The app as a deployment builds it, with every limit raised out of the way. Its log lines are formatted as
 * in production (the request line is part of a reply's cost), then dropped unless they warn (to stderr).
 */
async function buildBenchApp(env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({
    ...env,
    LLM_PROVIDER: 'builtin',
    EMBEDDINGS_PROVIDER: 'none',
    REPLY_DELAY_MS: '0',
    WIDGET_RATE_PER_IP_PER_MINUTE: '1000000000',
    WIDGET_RATE_PER_CONVERSATION_PER_MINUTE: '1000000000',
    RATE_LIMIT_KEY_PER_MINUTE: '1000000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });
  const app = await buildApp(config, { logDestination: { write: (line) => void (WARNING.test(line) && process.stderr.write(line)) } });
  await app.ready();
  return app;
}

/** Starts a conversation with the agent (not timed) and returns its visitor token and id. */
async function startConversation(app: FastifyInstance, agent: BenchAgent): Promise<{ id: string; token: string }> {
  const response = await app.inject({ method: 'POST', url: `/widget/v1/chatbots/${agent.chatbotId}/conversations`, remoteAddress: '127.0.0.1' });
  if (response.statusCode !== 201) throw new Error(`start: ${response.statusCode} ${response.body}`);
  const body = response.json<{ conversation_id: string; visitor_token: string }>();
  return { id: body.conversation_id, token: body.visitor_token };
}

/** Sends the visitor's question and returns the time until the response with the stored answer, and whether it quoted knowledge. */
async function timedReply(app: FastifyInstance, conversation: { id: string; token: string }, question: string): Promise<{ ms: number; answered: boolean }> {
  const began = performance.now();
  const response = await app.inject({
    method: 'POST',
    url: `/widget/v1/conversations/${conversation.id}/messages`,
    remoteAddress: '127.0.0.1',
    headers: { authorization: `Bearer ${conversation.token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ content: question }),
  });
  const ms = performance.now() - began;
  const reply = response.statusCode === 201 ? response.json<{ reply: { sources: unknown[] } | null }>().reply : null;
  if (!reply) throw new Error(`message: ${response.statusCode}, no stored answer: ${response.body.slice(0, 300)}`);
  return { ms, answered: reply.sources.length > 0 };
}

/** Fills one agent with `sizes` chunks in turn (ascending) and times, at each size, replies and bare search. */
export async function measureReplies(options: { backend: Backend; sizes: number[]; queries: number; warmup?: number; log?: (line: string) => void }): Promise<RepliesReport> {
  const { backend, queries } = options;
  const warmup = options.warmup ?? 20;
  const log = options.log ?? (() => {});
  const sizes = [...options.sizes].sort((a, b) => a - b);
  const text = syntheticText();
  const env = benchDatabaseEnv(backend, 'replies');
  const rows: RepliesRow[] = [];
  const app = await buildBenchApp(env).catch(async (error: unknown) => {
    await dropBenchDatabase(env);
    throw error;
  });
  try {
    const db = app.database.db;
    const agent = await createBenchAgent(db, text, 'Replies');
    // Drawn before the chunks, as the knowledge part draws them: the same seed gives the same questions.
    const questions = Array.from({ length: queries }, text.question);
    const search = (question: string) => knowledgeChunks.search(db, agent.workspaceId, agent.chatbotId, question, ANSWER_HITS);
    for (const size of sizes) {
      log(`replies, ${backend}: inserting up to ${size} chunks…`);
      await agent.growTo(size);
      await settle(env);
      for (const question of questions.slice(0, warmup)) {
        await search(question);
        await timedReply(app, await startConversation(app, agent), question);
      }
      log(`replies, ${backend}: timing ${queries} replies and searches at ${size} chunks…`);
      const replyTimes: number[] = [];
      const searchTimes: number[] = [];
      let answered = 0;
      for (const [i, question] of questions.entries()) {
        const conversation = await startConversation(app, agent);
        const timeSearch = async () => {
          const began = performance.now();
          await search(question);
          searchTimes.push(performance.now() - began);
        };
        if (i % 2) await timeSearch();
        const reply = await timedReply(app, conversation, question);
        replyTimes.push(reply.ms);
        if (reply.answered) answered++;
        if (i % 2 === 0) await timeSearch();
      }
      replyTimes.sort((a, b) => a - b);
      searchTimes.sort((a, b) => a - b);
      const round = (ms: number) => Math.round(ms * 10) / 10;
      const reply = { p50: round(percentile(replyTimes, 50)), p99: round(percentile(replyTimes, 99)) };
      const bare = { p50: round(percentile(searchTimes, 50)), p99: round(percentile(searchTimes, 99)) };
      rows.push({ chunks: size, reply, search: bare, ratio: Math.round((reply.p50 / Math.max(bare.p50, 0.1)) * 100) / 100, answered });
    }
  } finally {
    await app.close();
    await dropBenchDatabase(env);
  }
  const atTarget = rows.find((row) => row.chunks === TARGET_CHUNKS);
  return {
    backend,
    queries,
    warmup,
    rows,
    target: backend === 'sqlite' && atTarget ? { chunks: TARGET_CHUNKS, p50Ms: P50_TARGET_MS, pass: atTarget.reply.p50 <= P50_TARGET_MS } : null,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'sqlite' },
      sizes: { type: 'string', default: '1000,10000,100000' },
      queries: { type: 'string', default: '200' },
    },
  });
  const report = await measureReplies({
    backend: values.db === 'postgres' ? 'postgres' : 'sqlite',
    sizes: values.sizes!.split(',').map(Number),
    queries: Number(values.queries),
    log: (line) => console.error(line),
  });
  console.log(repliesTable(report));
}

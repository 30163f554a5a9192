import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dictionary } from '@zxcvbn-ts/language-common';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { prepareDatabase } from '../src/db/database.js';
import { newId } from '../src/lib/ids.js';
import { knowledgeChunks, type ChunkInput } from '../src/modules/knowledge/chunks.js';

// `npx tsx bench/knowledge-search.ts [--db sqlite|postgres] [--sizes 1000,10000,100000] [--queries 200]`
// Knowledge search latency as one agent's chunks grow: inserts synthetic chunks (English-like text drawn
// from a word list with Zipf frequencies, function words most frequent) through knowledgeChunks.insert,
// then times knowledgeChunks.search (the whole retrieval: analysis, vocabulary and typo lookups, ranked full
// text) over questions drawn from the same distribution, some with a typo. Not part of `npm test`.
const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    sizes: { type: 'string', default: '1000,10000,100000' },
    queries: { type: 'string', default: '200' },
  },
});
const backend = values.db === 'postgres' ? 'postgres' : 'sqlite';
const sizes = values.sizes!.split(',').map(Number).sort((a, b) => a - b);
const queryCount = Number(values.queries);
const pgUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// A fixed seed, so runs compare (mulberry32).
let seed = 0x5eed;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
}

const FUNCTION_WORDS = 'the of and to a in is you that it for on are with as we be at this have from or by our your can will not all an if us do more'.split(' ');
const contentWords = [...dictionary['diceware-common'] as string[]];
for (let i = contentWords.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [contentWords[i], contentWords[j]] = [contentWords[j]!, contentWords[i]!];
}
const ranked = [...FUNCTION_WORDS, ...contentWords];
// Zipf (s = 1): the cumulative weights, sampled by binary search.
const cumulative: number[] = [];
ranked.reduce((sum, _, rank) => (cumulative.push(sum + 1 / (rank + 1)), sum + 1 / (rank + 1)), 0);
function word(): string {
  const target = random() * cumulative.at(-1)!;
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cumulative[middle]! < target) low = middle + 1;
    else high = middle;
  }
  return ranked[low]!;
}
const sentence = (words: number) => Array.from({ length: words }, word).join(' ');
const paragraph = () => Array.from({ length: 6 + Math.floor(random() * 6) }, () => `${sentence(8 + Math.floor(random() * 12))}.`).join(' ');

function typo(text: string): string {
  const at = Math.floor(random() * text.length);
  return random() < 0.5 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + 'x' + text.slice(at + 1);
}

function question(): string {
  const words = Array.from({ length: 3 + Math.floor(random() * 4) }, word);
  if (random() < 0.15) {
    const i = words.findIndex((w) => w.length >= 5);
    if (i >= 0) words[i] = typo(words[i]!);
  }
  return `${words.join(' ')}?`;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const env = backend === 'postgres'
  ? { DATABASE_URL: pgUrl, DATABASE_SCHEMA: `bench_knowledge_${process.pid}` }
  : { DATABASE_URL: `sqlite:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-knowledge-')), 'bench.db')}` };
const { handle } = await prepareDatabase(loadConfig({ ...env, LOG_LEVEL: 'silent' }).database);
const { db } = handle;
try {
  // The agent's row only: nothing here goes through the services (their audit trail is not what is measured).
  const at = new Date().toISOString();
  const workspace = { id: newId('workspace') };
  const chatbot = { id: newId('chatbot') };
  await db.insertInto('workspaces').values({ id: workspace.id, name: 'Bench knowledge', created_at: at }).execute();
  await db.insertInto('chatbots').values({
    id: chatbot.id, workspace_id: workspace.id, name: 'Knowledge', description: null, status: 'active', instructions: 'x', welcome_message: null,
    model: null, temperature: null, knowledge: '[]', lead_capture: '{}', allowed_origins: '[]', metadata: '{}', created_at: at, updated_at: at, published_at: null,
  }).execute();
  const sourceId = newId('source');
  const questions = Array.from({ length: queryCount }, question);
  console.log(`knowledge search, ${backend}: ${queryCount} questions, limit 5`);
  console.log('| chunks | insert (chunks/s) | p50 (ms) | p99 (ms) |');
  console.log('|---:|---:|---:|---:|');
  let stored = 0;
  for (const size of sizes) {
    const started = performance.now();
    const added = size - stored;
    for (let start = 0; start < added; start += 1000) {
      const documentId = newId('document');
      const chunks: ChunkInput[] = Array.from({ length: Math.min(1000, added - start) }, (_, i) => ({
        workspaceId: workspace.id, chatbotId: chatbot.id, sourceId, documentId, position: start + i,
        title: sentence(3), url: null, headingPath: [sentence(2)], content: paragraph(),
      }));
      await db.transaction().execute((trx) => knowledgeChunks.insert(trx, chunks));
    }
    const rate = added / ((performance.now() - started) / 1000);
    stored = size;
    if (env.DATABASE_SCHEMA) {
      // As autovacuum would in a steady state (see bench/run.ts settle).
      for (const table of ['knowledge_chunks', 'knowledge_terms', 'knowledge_term_variants']) await sql.raw(`vacuum (analyze) "${env.DATABASE_SCHEMA}"."${table}"`).execute(db);
    }
    for (const text of questions.slice(0, 20)) await knowledgeChunks.search(db, workspace.id, chatbot.id, text, 5);
    const times: number[] = [];
    for (const text of questions) {
      const at = performance.now();
      await knowledgeChunks.search(db, workspace.id, chatbot.id, text, 5);
      times.push(performance.now() - at);
      if (process.env.BENCH_SLOW && performance.now() - at > 50) console.log(text, performance.now() - at);
    }
    times.sort((a, b) => a - b);
    console.log(`| ${size} | ${Math.round(rate)} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} |`);
  }
} finally {
  await handle.close();
  if (env.DATABASE_SCHEMA) {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`drop schema if exists "${env.DATABASE_SCHEMA}" cascade`);
    await client.end();
  } else {
    fs.rmSync(path.dirname(env.DATABASE_URL.replace(/^sqlite:/, '')), { recursive: true, force: true });
  }
}

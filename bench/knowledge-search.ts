import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { prepareDatabase } from '../src/db/database.js';
import { knowledgeChunks } from '../src/modules/knowledge/chunks.js';
import { createKnowledgeSearch } from '../src/modules/knowledge/retrieval.js';
import { createBenchAgent } from './agent-chunks.js';
import { embedAll, syntheticEmbeddings } from './vectors.js';
import { benchDatabaseEnv, dropBenchDatabase, settle, type Backend } from './databases.js';
import { knowledgeSearchTable } from './report.js';
import { percentile, syntheticText } from './text.js';

// Knowledge search latency as one agent's chunks grow (issue 30). `npm run bench` runs it (`--only
// knowledge`); on its own: `npx tsx bench/knowledge-search.ts [--db sqlite|postgres] [--sizes 1000,10000,100000]
// [--queries 200]`. It inserts synthetic chunks (English-like text, `syntheticText`) through
// knowledgeChunks.insert, then times knowledgeChunks.search (the whole retrieval: analysis, vocabulary and
// typo lookups, ranked full text, the BM25F re-ranking; limit 5) over questions drawn from the same
// distribution, some with a typo. With `--dimensions n` (768 by default; 0: off) it also gives every chunk a
// synthetic embedding (bench/vectors.ts), trains the vector index as ingestion does, and times hybrid retrieval
// (full text fused with the nearest vectors; the question's embedding is computed locally). Not part of `npm test`.

/** One size of the agent's chunk set. */
export interface KnowledgeSearchRow {
  chunks: number;
  /** How fast the chunks added for this size went in, 1,000 per transaction. */
  insertPerSecond: number;
  p50: number;
  p99: number;
  /** Hybrid retrieval (full text fused with the vector index; the question's embedding is local, not timed). */
  hybrid: { p50: number; p99: number; cells: number } | null;
}

/** Knowledge search on one database, as `npm run bench` saves it. */
export interface KnowledgeSearchReport {
  backend: Backend;
  queries: number;
  /** Dimensions of the synthetic vectors of the hybrid measurement (0: not measured). */
  dimensions: number;
  rows: KnowledgeSearchRow[];
  /** p50 at the largest size over p50 at a tenth of it (when both were measured): sublinear below 10. */
  growth: { from: number; to: number; ratio: number; pass: boolean } | null;
  /** Issue 30's target for the p50 at 100,000 chunks (null when that size was not measured). */
  target: { p50Ms: number; pass: boolean } | null;
}

/** Issue 30: p50 at 100,000 chunks, full text alone. */
const P50_TARGET_MS: Record<Backend, number> = { sqlite: 30, postgres: 60 };

/** Fills one agent with `sizes` chunks in turn (ascending) and times the search at each size. */
export async function measureKnowledgeSearch(options: {
  backend: Backend;
  sizes: number[];
  queries: number;
  /** Dimensions of the synthetic embeddings for the hybrid measurement; 0: full text only. */
  dimensions?: number;
  log?: (line: string) => void;
}): Promise<KnowledgeSearchReport> {
  const { backend, queries } = options;
  const dimensions = options.dimensions ?? 0;
  const embeddings = syntheticEmbeddings(dimensions);
  const hybrid = createKnowledgeSearch(dimensions > 0 ? embeddings.embedder : null, { warn: () => {} });
  const log = options.log ?? (() => {});
  const sizes = [...options.sizes].sort((a, b) => a - b);
  const text = syntheticText();
  const env = benchDatabaseEnv(backend, 'knowledge', { redis: false });
  const { handle } = await prepareDatabase(loadConfig({ ...env, LOG_LEVEL: 'silent' }).database);
  const { db } = handle;
  const rows: KnowledgeSearchRow[] = [];
  try {
    const agent = await createBenchAgent(db, text, 'Knowledge');
    const { workspaceId, chatbotId, sourceId } = agent;
    const questions = Array.from({ length: queries }, text.question);
    for (const size of sizes) {
      log(`knowledge search, ${backend}: inserting up to ${size} chunks…`);
      const started = performance.now();
      const added = size - agent.chunks;
      await agent.growTo(size);
      if (dimensions > 0) {
        log(`knowledge search, ${backend}: embedding up to ${size} chunks (${dimensions} dimensions) and training the index…`);
        await embedAll(db, workspaceId, chatbotId, sourceId, embeddings);
      }
      const insertPerSecond = Math.round(added / ((performance.now() - started) / 1000));
      await settle(env);
      for (const question of questions.slice(0, 20)) await knowledgeChunks.search(db, workspaceId, chatbotId, question, 5);
      const times: number[] = [];
      for (const question of questions) {
        const began = performance.now();
        await knowledgeChunks.search(db, workspaceId, chatbotId, question, 5);
        times.push(performance.now() - began);
      }
      times.sort((a, b) => a - b);
      const round = (ms: number) => Math.round(ms * 10) / 10;
      let hybridRow: KnowledgeSearchRow['hybrid'] = null;
      if (dimensions > 0) {
        const hybridTimes: number[] = [];
        for (const question of questions) {
          const began = performance.now();
          await hybrid.search(db, workspaceId, chatbotId, question, 5);
          hybridTimes.push(performance.now() - began);
        }
        hybridTimes.sort((a, b) => a - b);
        const index = await db.selectFrom('knowledge_vector_indexes').select('cells').where('chatbot_id', '=', chatbotId).executeTakeFirst();
        hybridRow = { p50: round(percentile(hybridTimes, 50)), p99: round(percentile(hybridTimes, 99)), cells: Number(index?.cells ?? 0) };
      }
      rows.push({ chunks: size, insertPerSecond, p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), hybrid: hybridRow });
    }
  } finally {
    await handle.close();
    await dropBenchDatabase(env);
  }
  const largest = rows.at(-1);
  const tenth = rows.find((row) => largest && row.chunks * 10 === largest.chunks);
  const ratio = largest && tenth ? Math.round((largest.p50 / Math.max(tenth.p50, 0.1)) * 100) / 100 : null;
  const at100k = rows.find((row) => row.chunks === 100_000);
  return {
    backend,
    queries,
    dimensions,
    rows,
    growth: largest && tenth && ratio !== null ? { from: tenth.chunks, to: largest.chunks, ratio, pass: ratio < 10 } : null,
    target: at100k ? { p50Ms: P50_TARGET_MS[backend], pass: at100k.p50 <= P50_TARGET_MS[backend] } : null,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'sqlite' },
      sizes: { type: 'string', default: '1000,10000,100000' },
      queries: { type: 'string', default: '200' },
      dimensions: { type: 'string', default: '768' },
    },
  });
  const report = await measureKnowledgeSearch({
    backend: values.db === 'postgres' ? 'postgres' : 'sqlite',
    sizes: values.sizes!.split(',').map(Number),
    queries: Number(values.queries),
    dimensions: Number(values.dimensions),
    log: (line) => console.error(line),
  });
  console.log(knowledgeSearchTable(report));
}

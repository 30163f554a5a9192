/**
 * The public benchmark (npm run eval -- --squad): each article of the SQuAD 2.0 train subset becomes the
 * knowledge of one agent, learnt through the public API (one `text` source per paragraph, titled
 * "<article> ¶<n>", so a hit's source names its paragraph); then every question is asked of
 * GET …/knowledge/search (beside a BM25 baseline over the same paragraphs, eval/bm25.ts) and of the builtin
 * reply engine (eval/ask.ts).
 */
import { bm25Index } from '../bm25.js';
import { createAsker, replyKind, type ReplyKind } from '../ask.js';
import { expectStatus, startEvalService, waitForSources, without, type SourceView } from '../service.js';
import { containsGoldAnswer, loadSquadArticles, sampleQuestions, squadQuestions, type SquadQuestion } from './data.js';

/** What one question got: the gold paragraph's rank in the service's hits and BM25's, and the reply. */
export interface SquadResult {
  question: SquadQuestion;
  /** 1-based rank of the gold paragraph in the top 5 hits (null: absent, or the question is unanswerable). */
  rank: number | null;
  bm25Rank: number | null;
  /** The paragraph (0-based) of the first hit, or null without hits. */
  topParagraph: number | null;
  /** The first hit's absolute `confidence`, where knowledge/search returns one (null otherwise). */
  topConfidence: number | null;
  reply: string;
  kind: ReplyKind;
  /** The paragraphs (0-based) the reply cites as sources, best first. */
  citedParagraphs: number[];
  /** Answerable questions: the reply contains a gold answer (SQuAD normalisation); null when unanswerable. */
  goldInReply: boolean | null;
  /** Answerable questions: the reply cites the gold paragraph as a source. */
  goldLinked: boolean | null;
}

/** How to run the public benchmark. */
export interface SquadOptions {
  /** The environment the service is configured from (its EMBEDDINGS_* and LLM_* are left out: full text, builtin). */
  env?: Record<string, string | undefined>;
  /** Ask one question in `every` (a deterministic sample, eval/squad/data.ts); 1 asks them all. */
  every?: number;
  /** Only the first `articles` articles (the smoke test's tiny run). */
  articles?: number;
  ingestTimeoutMs?: number;
  log?: (line: string) => void;
}

/** The benchmark's run: every result, and how long ingestion and the questions took. */
export interface SquadRun {
  results: SquadResult[];
  paragraphs: number;
  ingestSeconds: number;
  askSeconds: number;
}

const OWN_PROVIDERS = ['EMBEDDINGS_PROVIDER', 'EMBEDDINGS_BASE_URL', 'EMBEDDINGS_MODEL', 'EMBEDDINGS_API_KEY', 'LLM_PROVIDER'];

/** The 1-based rank of `gold` among `ranked` (its first five), or null. */
function rankOf<K>(ranked: K[], gold: K): number | null {
  const index = ranked.slice(0, 5).indexOf(gold);
  return index === -1 ? null : index + 1;
}

/** Runs the public benchmark on a fresh database. */
export async function runSquadBenchmark(options: SquadOptions = {}): Promise<SquadRun> {
  const log = options.log ?? (() => {});
  const articles = loadSquadArticles().slice(0, options.articles ?? undefined);
  const questions = sampleQuestions(squadQuestions(articles), options.every ?? 1);
  const service = await startEvalService(without(options.env ?? {}, OWN_PROVIDERS));
  try {
    const { call } = service;
    const started = Date.now();
    const agents = new Map<string, { id: string; paragraphOf: Map<string, number>; bm25: ReturnType<typeof bm25Index<number>> }>();
    for (const article of articles) {
      const agent = await expectStatus<{ id: string }>(call, 201, 'POST', '/api/v1/chatbots', {
        name: `${article.title} assistant`,
        instructions: `Answer questions about ${article.title} from the knowledge.`,
      });
      const paragraphOf = new Map<string, number>();
      for (const [index, paragraph] of article.paragraphs.entries()) {
        const source = await expectStatus<SourceView>(call, 201, 'POST', `/api/v1/chatbots/${agent.id}/sources`, {
          type: 'text', title: `${article.title} ¶${index + 1}`, content: paragraph.context,
        });
        paragraphOf.set(source.id, index);
      }
      const bm25 = bm25Index(article.paragraphs.map((paragraph, index) => ({ key: index, text: paragraph.context })), 'en');
      agents.set(article.title, { id: agent.id, paragraphOf, bm25 });
    }
    const paragraphs = articles.reduce((sum, article) => sum + article.paragraphs.length, 0);
    log(`[squad] ${articles.length} agents, ${paragraphs} text sources added; waiting for ingestion`);
    for (const [title, agent] of agents) {
      const sources = await waitForSources(call, `/api/v1/chatbots/${agent.id}/sources`, options.ingestTimeoutMs ?? 600_000, (line) => log(`[squad] ${title}: ${line}`));
      const failed = sources.filter((source) => source.status !== 'ready');
      if (failed.length) throw new Error(`${title}: ${failed.length} sources not ready (${failed[0]!.error ?? failed[0]!.status})`);
    }
    const ingestSeconds = (Date.now() - started) / 1000;
    log(`[squad] ingested in ${ingestSeconds.toFixed(1)} s; asking ${questions.length} questions`);

    const ask = createAsker(service.app.database.db, service.workspaceId);
    const asking = Date.now();
    const results: SquadResult[] = [];
    for (const question of questions) {
      const agent = agents.get(question.article)!;
      const found = await expectStatus<{ data: { source_id: string; confidence?: number }[] }>(
        call, 200, 'GET', `/api/v1/chatbots/${agent.id}/knowledge/search?q=${encodeURIComponent(question.question)}&limit=5`,
      );
      const hitParagraphs = found.data.map((hit) => agent.paragraphOf.get(hit.source_id) ?? -1);
      const answerable = question.answers !== null;
      const reply = await ask(agent.id, question.question);
      const citedParagraphs = reply.sources.map((source) => agent.paragraphOf.get(source.source_id) ?? -1);
      results.push({
        question,
        rank: answerable ? rankOf(hitParagraphs, question.paragraph) : null,
        bm25Rank: answerable ? rankOf(agent.bm25.search(question.question, 5), question.paragraph) : null,
        topParagraph: hitParagraphs[0] ?? null,
        topConfidence: found.data[0]?.confidence ?? null,
        reply: reply.content,
        kind: replyKind(reply),
        citedParagraphs,
        goldInReply: answerable ? containsGoldAnswer(reply.content, question.answers!) : null,
        goldLinked: answerable ? citedParagraphs.includes(question.paragraph) : null,
      });
      if (results.length % 500 === 0) log(`[squad] ${results.length} of ${questions.length} asked`);
    }
    return { results, paragraphs, ingestSeconds, askSeconds: (Date.now() - asking) / 1000 };
  } finally {
    await service.close();
  }
}

import { termsFullTextHits, type WeightedTerm } from '../../db/dialect.js';
import type { Db } from '../../db/schema.js';
import { detectLanguage, indexTerms, queryWords, STEMMED_LANGUAGES, termOf, vocabularyOf, type Language, type QueryWord, type Stemmed } from './analyzer.js';
import { frameOf } from './question-frame.js';
import { knowledgeVectors } from './vectors.js';
import { CHUNK_COUNT_KEY, languageKey, languageTerm, vocabulary, wordKey, type WordCounts } from './vocabulary.js';

/** A chunk of a source's document, as ingestion hands it over. */
export interface ChunkInput {
  workspaceId: string;
  chatbotId: string;
  sourceId: string;
  documentId: string;
  position: number;
  title: string;
  url: string | null;
  headingPath: string[];
  content: string;
}

/** A chunk retrieved for a question; score: higher is better, in (0, 1], the search's best hit scoring 1. */
export interface KnowledgeHit {
  sourceId: string;
  documentId: string;
  chunkId: number;
  title: string;
  url: string | null;
  headingPath: string[];
  content: string;
  score: number;
  /** The chunk's detected language (en, es, fr, de, pt or other). */
  language: string;
  /**
   * How much of the question the chunk holds, in [0, 1], whatever the other hits: the share of the question's
   * words (weighted by how rare they are; a word the agent's knowledge never uses weighs as its rarest known
   * one; a typo's correction counts CORRECTION_WEIGHT) found in it. 0 when unknown (a chunk found by its
   * vector alone).
   */
  confidence: number;
  /**
   * The index terms of the question the chunk holds, with their weight (what an answer's sentences are picked
   * by) and the question word (folded) each stands for.
   */
  matched: { term: string; word: string; idf: number }[];
}

const INSERT_BATCH = 100;
const DELETE_PAGE = 1000;
// The OR of more terms than this costs more than it ranks (32 question words, each with a few stems).
const MAX_QUERY_TERMS = 96;
// About how many chunks the full-text query may have to rank (see matchPlan).
const CANDIDATE_BUDGET = 2000;

/**
 * Which terms the full-text query matches on. Ranking every chunk that holds a common term costs time in
 * proportion to the agent's size; a common term weighs little in the ranking anyway (low IDF). So when rarer
 * terms exist, only the rarest ones whose chunks add up to CANDIDATE_BUDGET select the candidates (any of
 * them); when every term is common, chunks holding all of them do (any of them, if fewer than wanted).
 */
function matchPlan(chunkCounts: ReadonlyMap<string, number>, agentChunks: number): { terms: WeightedTerm[]; mode: 'any' | 'all'; scoring: WeightedTerm[] } | null {
  const byRarity = [...chunkCounts].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_QUERY_TERMS);
  if (byRarity.length === 0) return null;
  // BM25's inverse document frequency (PostgreSQL's ranking has none of its own).
  const weighted = byRarity.map(([term, docs]) => ({ term, docs, idf: Math.log(1 + (Math.max(agentChunks, docs) - docs + 0.5) / (docs + 0.5)) }));
  const selective: WeightedTerm[] = [];
  let candidates = 0;
  for (const term of weighted) {
    if (candidates + term.docs > CANDIDATE_BUDGET) break;
    selective.push(term);
    candidates += term.docs;
  }
  if (selective.length > 0) return { terms: selective, mode: 'any', scoring: weighted };
  return { terms: weighted, mode: weighted.length > 1 ? 'all' : 'any', scoring: weighted };
}

// The database's own ranking picks this many candidates; BM25F over their terms orders them, the same
// formula on both databases (PostgreSQL's ts_rank has no IDF or term saturation, FTS5's bm25 no title field
// of its own weight in the same units).
const RERANKED_CANDIDATES = 50;
const TITLE_TERM_WEIGHT = 3;
const K1 = 1.2;
const B = 0.75;

/** A chunk's weighted term frequencies (a title term counts TITLE_TERM_WEIGHT times) and its weighted length. */
function termFrequencies(row: { title_terms: string; terms: string }): { tf: Map<string, number>; length: number } {
  const tf = new Map<string, number>();
  let length = 0;
  for (const [text, weight] of [[row.title_terms, TITLE_TERM_WEIGHT], [row.terms, 1]] as const) {
    for (const term of text.split(' ')) {
      if (term === '') continue;
      tf.set(term, (tf.get(term) ?? 0) + weight);
      length += weight;
    }
  }
  return { tf, length };
}

/** A question word as ranking weighs it: the terms that stand for it, and one IDF for them all. */
type RankedWord = { terms: string[]; idf: number };

/**
 * The question's words for ranking. A word is one unit whatever term a chunk holds it by: "Lucía" is "luc" in a
 * Spanish chunk and "lucia" in an English one, and the rarer spelling must not weigh more than the word (its IDF
 * counts the chunks holding any of its terms).
 */
function rankedWords(words: readonly QueryWord[], corrections: ReadonlyMap<string, ReadonlyMap<string, number>>, chunkCounts: ReadonlyMap<string, number>, agentChunks: number): RankedWord[] {
  return words.flatMap((word) => {
    const terms = [...new Set([...word.terms, ...(corrections.get(word.word)?.keys() ?? [])])].filter((term) => chunkCounts.has(term));
    if (terms.length === 0) return [];
    const docs = Math.min(agentChunks, terms.reduce((sum, term) => sum + chunkCounts.get(term)!, 0));
    return [{ terms, idf: Math.log(1 + (Math.max(agentChunks, docs) - docs + 0.5) / (docs + 0.5)) }];
  });
}

/** BM25F scores of the candidates for the question's words; lengths are normalised by the candidates' mean length. */
function bm25f(candidates: readonly { title_terms: string; terms: string }[], words: readonly RankedWord[]): number[] {
  const frequencies = candidates.map(termFrequencies);
  const meanLength = frequencies.reduce((sum, c) => sum + c.length, 0) / Math.max(frequencies.length, 1) || 1;
  return frequencies.map(({ tf, length }) => {
    let score = 0;
    for (const { terms, idf } of words) {
      const f = terms.reduce((sum, term) => sum + (tf.get(term) ?? 0), 0);
      if (f > 0) score += idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / meanLength)));
    }
    return score;
  });
}

// Two question words found side by side in a chunk ("full service") add this share of their mean weight.
const PAIR_WEIGHT = 1;

/**
 * The bonus of each candidate for the question's adjacent word pairs it holds in the same order, side by side
 * (stopwords apart): a chunk saying "full service" answers "how much is a full service?" better than one that
 * says "full" here and "service" there, whatever their lengths.
 */
function pairBonuses(candidates: readonly { title_terms: string; terms: string }[], words: readonly QueryWord[], idfOf: ReadonlyMap<string, number>): number[] {
  const pairs: { first: string[]; second: string[]; weight: number }[] = [];
  for (let i = 0; i + 1 < words.length; i++) {
    const first = words[i]!.terms.filter((term) => idfOf.has(term));
    const second = words[i + 1]!.terms.filter((term) => idfOf.has(term));
    if (first.length === 0 || second.length === 0) continue;
    const weight = (Math.max(...first.map((term) => idfOf.get(term)!)) + Math.max(...second.map((term) => idfOf.get(term)!))) / 2;
    pairs.push({ first, second, weight });
  }
  if (pairs.length === 0) return candidates.map(() => 0);
  return candidates.map((candidate) => {
    const adjacent = new Set<string>();
    for (const text of [candidate.title_terms, candidate.terms]) {
      const terms = text.split(' ');
      for (let i = 0; i + 1 < terms.length; i++) adjacent.add(`${terms[i]} ${terms[i + 1]}`);
    }
    return pairs.reduce((bonus, pair) => (pair.first.some((a) => pair.second.some((b) => adjacent.has(`${a} ${b}`))) ? bonus + PAIR_WEIGHT * pair.weight : bonus), 0);
  });
}

/** Each question word's weight and the terms that stand for it: the word, its stems, the corrections of a typo. */
type WordWeight = { word: string; raw: string; terms: string[]; corrected: ReadonlySet<string>; idf: number };

/**
 * A word matched only through a typo correction counts this much of its weight: one typo ("Wen is the office
 * open?", "rentl") barely lowers confidence, while a correction still counts less than the word as written
 * ("password" is not quite "passport").
 */
export const CORRECTION_WEIGHT = 0.8;
// A frame word ("cost", "combien") weighs at most this: it says what kind of answer is wanted, not what about.
const FRAME_WEIGHT = 0.5;

/**
 * The weight of each question word: the IDF of its rarest known term. A word the agent's knowledge never uses
 * (no term, no correction) weighs as much as the question's rarest known word: it may be what the question is
 * about ("Do you rent kayaks?" is not answered by a page about renting bikes), or a paraphrase of a word the
 * knowledge writes otherwise ("hired" for "rental"); weighing it as a word of no chunk (the most there is)
 * made every paraphrase and unknown spelling decline.
 */
function questionWeights(words: readonly QueryWord[], isFrame: (word: string) => boolean, corrections: ReadonlyMap<string, ReadonlyMap<string, number>>, scoring: readonly WeightedTerm[]): WordWeight[] {
  const idfOf = new Map(scoring.map((term) => [term.term, term.idf]));
  const known = words.map((word) => {
    const corrected = new Set(corrections.get(word.word)?.keys() ?? []);
    const terms = [...word.terms, ...corrected].filter((term) => idfOf.has(term));
    const idf = terms.length > 0 ? Math.max(...terms.map((term) => idfOf.get(term)!)) : null;
    return { word: word.word, raw: word.raw, terms, corrected, idf: idf !== null && isFrame(word.word) ? Math.min(idf, FRAME_WEIGHT) : idf };
  });
  const content = known.flatMap((word) => (word.idf === null || isFrame(word.word) ? [] : [word.idf]));
  const rarest = content.length > 0 ? Math.max(...content) : FRAME_WEIGHT;
  return known.map((word) => ({ ...word, idf: word.idf ?? (isFrame(word.word) ? FRAME_WEIGHT : rarest) }));
}

/**
 * How much of the question (by weight) a chunk's terms hold, and which terms. A word counts when the chunk
 * holds it, its stem in the chunk's language, or (for less) a correction of it; a stem of another language
 * that happens to match ("near" stemmed as Spanish) does not.
 */
function coverage(weights: readonly WordWeight[], held: ReadonlySet<string>, language: Language): Pick<KnowledgeHit, 'confidence' | 'matched'> {
  let total = 0;
  let found = 0;
  const matched: KnowledgeHit['matched'] = [];
  for (const { word, raw, terms, corrected, idf } of weights) {
    total += idf;
    const own = new Set([word, termOf(raw, language)]);
    const present = terms.filter((term) => held.has(term) && (own.has(term) || corrected.has(term)));
    if (present.length === 0) continue;

    found += present.some((term) => own.has(term)) ? idf : idf * CORRECTION_WEIGHT;
    for (const term of present) matched.push({ term, word, idf });
  }
  return { confidence: total > 0 ? found / total : 0, matched };
}

/** The text of a chunk that names it (title and headings): weighted above its content. */
const titleText = (title: string, headingPath: readonly string[]) => [title, ...headingPath].join('\n');

/** Adds a chunk's distinct words (word + term) to `counts`, once per chunk, and the chunk to the agent's count and its language's. */
function countWords(counts: WordCounts, title: string, headingPath: readonly string[], content: string, language: Language): void {
  counts.set(CHUNK_COUNT_KEY, (counts.get(CHUNK_COUNT_KEY) ?? 0) + 1);
  counts.set(languageKey(language), (counts.get(languageKey(language)) ?? 0) + 1);
  for (const [word, term] of vocabularyOf(`${titleText(title, headingPath)}\n${content}`, language)) {
    const key = wordKey(word, term);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
}

function parseHeadingPath(text: string): string[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

type ChunkScope = { column: 'document_id' | 'source_id' | 'chatbot_id'; value: string };

/**
 * Deletes the chunks of one document, source or agent page by page (memory stays bounded for a source of
 * 100,000 chunks), with their vectors, counting their words out of the agent's vocabulary as it goes.
 */
async function deleteWhere(trx: Db, workspaceId: string, scope: ChunkScope): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await trx.selectFrom('knowledge_chunks')
      .select(['id', 'chatbot_id', 'title', 'heading_path', 'content', 'language'])
      .where('workspace_id', '=', workspaceId).where(scope.column, '=', scope.value)
      .orderBy('id').limit(DELETE_PAGE).execute();
    if (rows.length === 0) return deleted;
    const countsByAgent = new Map<string, WordCounts>();
    for (const row of rows) {
      const counts = countsByAgent.get(row.chatbot_id) ?? new Map();
      countsByAgent.set(row.chatbot_id, counts);
      if (scope.column !== 'chatbot_id') countWords(counts, row.title, parseHeadingPath(row.heading_path), row.content, row.language as Language);
    }
    const ids = rows.map((row) => Number(row.id));
    await trx.deleteFrom('knowledge_chunks').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
    await knowledgeVectors.deleteChunks(trx, workspaceId, ids);
    for (const [chatbotId, counts] of countsByAgent) {
      if (scope.column === 'chatbot_id') {
        await vocabulary.removeAgent(trx, workspaceId, chatbotId);
        await knowledgeVectors.deleteAgent(trx, workspaceId, chatbotId);
      }
      else await vocabulary.remove(trx, workspaceId, chatbotId, counts);
    }
    deleted += rows.length;
  }
}

/** What a search knows of the conversation besides the question. */
export interface SearchOptions {
  /** Languages the question may be in besides its knowledge's: the agent's (when set) and the visitor's. */
  languages?: readonly Stemmed[];
}

/**
 * The languages a question to this agent may be in: the given ones (the agent's, the visitor's) and those of its
 * knowledge; none (any of the five) for an agent whose chunks were counted before languages were.
 */
async function expectedLanguages(db: Db, workspaceId: string, chatbotId: string, given: readonly Stemmed[]): Promise<Stemmed[]> {
  const counts = await vocabulary.known(db, workspaceId, chatbotId, STEMMED_LANGUAGES.map(languageTerm));
  const knowledge = STEMMED_LANGUAGES.filter((language) => (counts.get(languageTerm(language)) ?? 0) > 0);
  return knowledge.length === 0 ? [] : [...new Set([...given, ...knowledge])];
}

/** SQL of an agent's knowledge chunks; every query carries the workspace id and, for reads, the agent. */
export const knowledgeChunks = {
  /** Analyses chunks (language, index terms, vocabulary) and inserts them; returns how many. Call in a transaction. */
  async insert(trx: Db, chunks: ChunkInput[]): Promise<number> {
    const createdAt = new Date().toISOString();
    const countsByAgent = new Map<string, { workspaceId: string; chatbotId: string; counts: WordCounts }>();
    for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
      const rows = chunks.slice(start, start + INSERT_BATCH).map((chunk) => {
        const language = detectLanguage(`${titleText(chunk.title, chunk.headingPath)}\n${chunk.content}`);
        const agentKey = `${chunk.workspaceId}\u0000${chunk.chatbotId}`;
        const agent = countsByAgent.get(agentKey) ?? { workspaceId: chunk.workspaceId, chatbotId: chunk.chatbotId, counts: new Map() };
        countsByAgent.set(agentKey, agent);
        countWords(agent.counts, chunk.title, chunk.headingPath, chunk.content, language);
        return {
          workspace_id: chunk.workspaceId, chatbot_id: chunk.chatbotId, source_id: chunk.sourceId, document_id: chunk.documentId,
          position: chunk.position, title: chunk.title, url: chunk.url, heading_path: JSON.stringify(chunk.headingPath), content: chunk.content,
          language, title_terms: indexTerms(titleText(chunk.title, chunk.headingPath), language), terms: indexTerms(chunk.content, language), created_at: createdAt,
        };
      });
      await trx.insertInto('knowledge_chunks').values(rows).execute();
    }
    for (const { workspaceId, chatbotId, counts } of countsByAgent.values()) await vocabulary.add(trx, workspaceId, chatbotId, counts);
    return chunks.length;
  },

  /** Deletes the chunks of one document; returns how many. */
  deleteByDocument(trx: Db, workspaceId: string, documentId: string): Promise<number> {
    return deleteWhere(trx, workspaceId, { column: 'document_id', value: documentId });
  },

  /** Deletes the chunks of one source; returns how many. */
  deleteBySource(trx: Db, workspaceId: string, sourceId: string): Promise<number> {
    return deleteWhere(trx, workspaceId, { column: 'source_id', value: sourceId });
  },

  /** Deletes every chunk of an agent and its vocabulary; returns how many chunks. */
  deleteByChatbot(trx: Db, workspaceId: string, chatbotId: string): Promise<number> {
    return deleteWhere(trx, workspaceId, { column: 'chatbot_id', value: chatbotId });
  },

  /** Chunks of an agent by id, as hits scored 0 (the vector side of a hybrid search reads them). */
  async byIds(db: Db, workspaceId: string, chatbotId: string, ids: readonly number[]): Promise<KnowledgeHit[]> {
    if (ids.length === 0) return [];
    const rows = await db.selectFrom('knowledge_chunks').select(['id', 'source_id', 'document_id', 'title', 'url', 'heading_path', 'content', 'language'])
      .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('id', 'in', ids).execute();
    return rows.map((row) => ({
      sourceId: row.source_id, documentId: row.document_id, chunkId: Number(row.id), title: row.title, url: row.url,
      headingPath: parseHeadingPath(row.heading_path), content: row.content, score: 0, language: row.language, confidence: 0, matched: [],
    }));
  },

  /**
   * Ranked retrieval for a visitor question, best first: each word stands for its stems in the five
   * languages that the agent's chunks hold, or, when it holds none, for the nearest words of the agent's
   * vocabulary (a typo); the rarest of those terms select the candidates (matchPlan). Only plain terms reach
   * the full-text query.
   */
  async search(db: Db, workspaceId: string, chatbotId: string, question: string, limit: number, options: SearchOptions = {}): Promise<KnowledgeHit[]> {
    if (limit <= 0) return [];
    const words = queryWords(question, await expectedLanguages(db, workspaceId, chatbotId, options.languages ?? []));
    if (words.length === 0) return [];
    const known = await vocabulary.known(db, workspaceId, chatbotId, [...new Set(words.flatMap((word) => word.terms))]);
    // A name the knowledge never uses ("Paris") is not a typo of a word it does ("parts").
    const misspelt = words.filter((word) => !word.name && !word.terms.some((term) => known.has(term))).map((word) => word.word);
    const agentChunks = known.get(CHUNK_COUNT_KEY) ?? 0;
    known.delete(CHUNK_COUNT_KEY);
    const chunkCounts = new Map(known);
    const corrections = await vocabulary.corrections(db, workspaceId, chatbotId, misspelt);
    for (const corrected of corrections.values()) {
      for (const [term, docs] of corrected) chunkCounts.set(term, docs);
    }
    const plan = matchPlan(chunkCounts, agentChunks);
    if (!plan) return [];
    const candidates = Math.max(limit, RERANKED_CANDIDATES);
    const query = (terms: readonly WeightedTerm[], mode: 'any' | 'all') => db.selectFrom('knowledge_chunks as c')
      .innerJoin(termsFullTextHits(db, 'knowledge_chunks', chatbotId, terms, mode, candidates), 'hits.id', 'c.id')
      .select(['c.id', 'c.source_id', 'c.document_id', 'c.title', 'c.url', 'c.heading_path', 'c.content', 'c.language', 'c.position', 'c.title_terms', 'c.terms'])
      .where('c.workspace_id', '=', workspaceId).where('c.chatbot_id', '=', chatbotId)
      .orderBy('hits.rank', 'desc').orderBy('c.position').orderBy('c.id')
      .limit(candidates)
      .execute();
    let rows = await query(plan.terms, plan.mode);
    if (plan.mode === 'all' && rows.length < limit) rows = await query(plan.terms, 'any');
    const pairs = pairBonuses(rows, words, new Map(plan.scoring.map((term) => [term.term, term.idf])));
    const scores = bm25f(rows, rankedWords(words, corrections, chunkCounts, agentChunks)).map((score, i) => score + pairs[i]!);
    const ranked = rows.map((row, i) => ({ row, score: scores[i]! }))
      .sort((a, b) => b.score - a.score || a.row.position - b.row.position || Number(a.row.id) - Number(b.row.id))
      .slice(0, limit);
    // Relative to the best hit, so a score reads the same whatever the agent's size.
    const best = Math.max(...ranked.map((hit) => hit.score), Number.MIN_VALUE);
    const weights = questionWeights(words, frameOf(question), corrections, plan.scoring);
    return ranked.map(({ row, score }) => {
      const held = new Set(`${row.title_terms} ${row.terms}`.split(' '));
      return {
        sourceId: row.source_id, documentId: row.document_id, chunkId: Number(row.id), title: row.title, url: row.url,
        headingPath: parseHeadingPath(row.heading_path), content: row.content, score: Math.min(1, Math.max(score / best, 1e-9)),
        language: row.language, ...coverage(weights, held, row.language as Language),
      };
    });
  },
};

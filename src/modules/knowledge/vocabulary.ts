import type { Db } from '../../db/schema.js';

// Typo tolerance: each agent's vocabulary (folded word, its index term, in how many chunks) and the
// deletion neighbourhood of each word (the word with up to one or two letters removed), so the words within
// edit distance 1–2 of a misspelt one are found by an index lookup (SymSpell's symmetric deletion), whatever
// the size of the vocabulary. Counts go down as chunks are deleted; a word whose count reaches zero leaves
// the vocabulary and its neighbourhood in the same transaction.

const BATCH = 500;
// Longer tokens are URLs, codes or joined words: matched exactly only (their neighbourhoods would be huge).
const MAX_TOLERANT_LENGTH = 24;
// A misspelt word stands for at most this many words of the vocabulary (the most frequent at the least distance).
const MAX_CORRECTIONS = 3;

/** How many edits a word of this many letters may carry: none below 4, 1 below 7, else 2. */
export function maxEdits(length: number): number {
  if (length < 4 || length > MAX_TOLERANT_LENGTH) return 0;
  return length < 7 ? 1 : 2;
}

/** The word and every string made by removing up to `edits` of its characters. */
export function deletionVariants(word: string, edits: number): Set<string> {
  const variants = new Set([word]);
  let frontier = [word];
  for (let round = 0; round < edits; round++) {
    const next: string[] = [];
    for (const text of frontier) {
      const chars = Array.from(text);
      for (let i = 0; i < chars.length; i++) {
        const shorter = chars.slice(0, i).join('') + chars.slice(i + 1).join('');
        if (!variants.has(shorter)) {
          variants.add(shorter);
          next.push(shorter);
        }
      }
    }
    frontier = next;
  }
  return variants;
}

/** Edit distance with adjacent transpositions (optimal string alignment), counted in characters. */
export function editDistance(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  const rows: number[][] = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[x.length]![y.length]!;
}

const tolerant = (word: string) => maxEdits(Array.from(word).length) > 0 && !/\p{N}/u.test(word);

function slices<T>(items: readonly T[], size = BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** `word\u0000term` keys: a word may have different terms in chunks of different languages. */
export type WordCounts = Map<string, number>;
export const wordKey = (word: string, term: string) => `${word}\u0000${term}`;
/** The empty word's entry counts the agent's chunks (for the ranking's IDF): no text has an empty word. */
export const CHUNK_COUNT_KEY = wordKey('', '');
/** The empty word's `lang:xx` entries count the agent's chunks in each language (no index term holds a colon). */
export const languageTerm = (language: string) => `lang:${language}`;
export const languageKey = (language: string) => wordKey('', languageTerm(language));
const splitKey = (key: string) => key.split('\u0000') as [string, string];

/**
 * Adds (`sign` 1) or subtracts (-1) the counts of these keys in one upsert. Subtracted words exist (they were
 * counted in); one that did not would be inserted below zero, and removed with the words left in no chunk.
 */
async function addToCounts(trx: Db, workspaceId: string, chatbotId: string, keys: readonly string[], counts: WordCounts, sign: 1 | -1): Promise<void> {
  const rows = keys.map((key) => {
    const [word, term] = splitKey(key);
    return { workspace_id: workspaceId, chatbot_id: chatbotId, word, term, docs: sign * counts.get(key)! };
  });
  await trx.insertInto('knowledge_terms').values(rows)
    .onConflict((conflict) => conflict.columns(['workspace_id', 'chatbot_id', 'word', 'term']).doUpdateSet((e) => ({ docs: e('knowledge_terms.docs', '+', e.ref('excluded.docs')) })))
    .execute();
}

/** SQL of the vocabulary tables; every query carries the workspace and the agent. */
export const vocabulary = {
  /** Counts `counts` (word+term → chunks) in; new words get their deletion neighbourhood. */
  async add(trx: Db, workspaceId: string, chatbotId: string, counts: WordCounts): Promise<void> {
    // Sorted, so concurrent writers to one agent lock rows in the same order (no deadlock on PostgreSQL).
    for (const slice of slices([...counts.keys()].sort())) {
      const words = [...new Set(slice.map((key) => splitKey(key)[0]))];
      const existing = new Set((await trx.selectFrom('knowledge_terms').select('word').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('word', 'in', words).execute()).map((row) => row.word));
      await addToCounts(trx, workspaceId, chatbotId, slice, counts, 1);
      const variants = words.filter((word) => !existing.has(word) && tolerant(word))
        .flatMap((word) => [...deletionVariants(word, maxEdits(Array.from(word).length))].map((variant) => ({ workspace_id: workspaceId, chatbot_id: chatbotId, variant, word })));
      for (const batch of slices(variants, 1000)) {
        await trx.insertInto('knowledge_term_variants').values(batch).onConflict((conflict) => conflict.doNothing()).execute();
      }
    }
  },

  /** Counts `counts` out; words left in no chunk leave the vocabulary with their neighbourhood. */
  async remove(trx: Db, workspaceId: string, chatbotId: string, counts: WordCounts): Promise<void> {
    // A statement per slice, not per word: deleting a large source (tens of thousands of words) stays quick.
    for (const slice of slices([...counts.keys()].sort())) await addToCounts(trx, workspaceId, chatbotId, slice, counts, -1);
    const words = [...new Set([...counts.keys()].map((key) => splitKey(key)[0]))];
    for (const slice of slices(words)) {
      await trx.deleteFrom('knowledge_terms').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('word', 'in', slice).where('docs', '<=', 0).execute();
      const kept = new Set((await trx.selectFrom('knowledge_terms').select('word').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('word', 'in', slice).execute()).map((row) => row.word));
      const gone = slice.filter((word) => !kept.has(word));
      if (gone.length > 0) await trx.deleteFrom('knowledge_term_variants').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('word', 'in', gone).execute();
    }
  },

  /** Forgets an agent's whole vocabulary. */
  async removeAgent(trx: Db, workspaceId: string, chatbotId: string): Promise<void> {
    await trx.deleteFrom('knowledge_term_variants').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
    await trx.deleteFrom('knowledge_terms').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
  },

  /** Which of `terms` some chunk of the agent holds, each with (about) how many chunks hold it; and under CHUNK_COUNT_KEY, how many chunks it has. */
  async known(db: Db, workspaceId: string, chatbotId: string, terms: readonly string[]): Promise<Map<string, number>> {
    const rows = await db.selectFrom('knowledge_terms').select((e) => ['term', e.fn.sum<number>('docs').as('docs')])
      .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('term', 'in', [...terms, '']).groupBy('term').execute();
    return new Map(rows.map((row) => [row.term === '' ? CHUNK_COUNT_KEY : row.term, Number(row.docs)]));
  },

  /** For each misspelt word, the terms (and their chunk counts) of the nearest words of the agent's vocabulary within its edit budget. */
  async corrections(db: Db, workspaceId: string, chatbotId: string, words: readonly string[]): Promise<Map<string, Map<string, number>>> {
    const wanted = words.filter(tolerant).map((word) => ({ word, variants: deletionVariants(word, maxEdits(Array.from(word).length)) }));
    const all = [...new Set(wanted.flatMap(({ variants }) => [...variants]))];
    if (all.length === 0) return new Map();
    // Two lookups rather than a join: a planner without statistics may scan the vocabulary for the join.
    const hits = await db.selectFrom('knowledge_term_variants').select(['variant', 'word'])
      .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('variant', 'in', all).execute();
    const candidateWords = [...new Set(hits.map((hit) => hit.word))];
    if (candidateWords.length === 0) return new Map();
    const entries = await db.selectFrom('knowledge_terms').select(['word', 'term', 'docs'])
      .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('word', 'in', candidateWords).execute();
    const entriesByWord = new Map<string, typeof entries>();
    for (const entry of entries) entriesByWord.set(entry.word, [...(entriesByWord.get(entry.word) ?? []), entry]);
    const rows = hits.flatMap((hit) => (entriesByWord.get(hit.word) ?? []).map((entry) => ({ variant: hit.variant, ...entry })));
    const result = new Map<string, Map<string, number>>();
    for (const { word, variants } of wanted) {
      const candidates = new Map<string, { distance: number; docs: number; terms: Map<string, number> }>();
      for (const row of rows) {
        if (!variants.has(row.variant)) continue;
        const known = candidates.get(row.word);
        if (known) {
          if (!known.terms.has(row.term)) { known.terms.set(row.term, Number(row.docs)); known.docs += Number(row.docs); }
          continue;
        }
        const distance = editDistance(word, row.word);
        if (distance <= maxEdits(Math.min(Array.from(word).length, Array.from(row.word).length))) candidates.set(row.word, { distance, docs: Number(row.docs), terms: new Map([[row.term, Number(row.docs)]]) });
      }
      const nearest = Math.min(...[...candidates.values()].map((candidate) => candidate.distance));
      const chosen = [...candidates.values()].filter((candidate) => candidate.distance === nearest).sort((a, b) => b.docs - a.docs).slice(0, MAX_CORRECTIONS);
      if (chosen.length > 0) result.set(word, new Map(chosen.flatMap((candidate) => [...candidate.terms])));
    }
    return result;
  },
};

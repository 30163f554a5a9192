import { indexTerms, queryWords, termOf, type Language } from '../knowledge/analyzer.js';
import type { KnowledgeHit } from '../knowledge/chunks.js';
import { askedKinds, askedObject, holdsKind, type FactKind } from '../knowledge/question-frame.js';
import type { MessageSource } from './engine.js';

/**
 * The builtin provider's reply from knowledge, of one of three kinds decided by how sure it is (`confidence`):
 * `answered`, the one or two sentences of the top passage (or of another, clearly better one) that answer the
 * question, quoted as written (never a word the knowledge does not say), with their document as the source;
 * `best_matches`, when no sentence is sure enough but some passages hold a fair share of the question: those
 * documents, offered as pages that may help (best-matches.ts); `unanswered`, when nothing does. Deterministic,
 * and quick: a few chunks of a few hundred words.
 */

/**
 * The reply's confidence at or above which its sentence is stated as the answer. The confidence of a sentence
 * is its passage's (the share of the question the chunk holds: KnowledgeHit.confidence) scaled by how much of
 * what the passage matched the sentence itself holds, under its title and headings (a sentence holding none of
 * it keeps SENTENCE_SHARE_FLOOR of the passage's). These thresholds are to be chosen from the measured
 * precision/coverage curve of `npm run eval` (docs/evaluation.md); until then they are the values that keep the
 * business fixture's figures.
 */
export const ANSWER_CONFIDENCE = 0.4;
/** The same for a sentence holding the kind of fact the question asks for ("Price: £49" for "how much"), or the thing an offer question names: itself evidence. */
export const ANSWER_CONFIDENCE_WITH_EVIDENCE = 0.3;
/** Below the answer's threshold, passages holding at least this share of the question are offered as best matches; below it, the reply declines. */
export const BEST_MATCH_CONFIDENCE = 0.25;
/** A sentence holding none of what its passage matched keeps this share of the passage's confidence. */
export const SENTENCE_SHARE_FLOOR = 0.5;

// Chunks whose sentences compete for the answer.
const CONSIDERED_HITS = 4;
// A chunk holding this much less of the question than the best one does not compete.
const CONFIDENCE_GAP = 0.25;
// A sentence of a lower-ranked passage must outscore the top passage's best by this share per place between them (clearlyBetter).
const RANK_MARGIN = 0.1;
// Further sentences of the chunk join the answer when they score at least this share of the best one, at most this many.
const SECOND_SHARE = 0.5;
const MAX_EXTRA_SENTENCES = 2;
// The sentence after the first joins when it goes on from it and the answer stays this short (it completes, not answers).
const CONTINUATION_WORDS = 45;

// A sentence is read under its chunk's title and headings; the question's words in the sentence itself count this much more.
const OWN_WORDS_BONUS = 0.3;

// A sentence holding the kind of fact asked for ("Price: £49") outweighs one that only repeats the question's words.
const KIND_WEIGHT = 1.5;

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

const isTableRow = (line: string) => /^\|?[^|\n]+(\|[^|\n]*)+\|?$/.test(line);
const isTableRule = (line: string) => /^[\s|:-]+$/.test(line) && line.includes('-');
const cellsOf = (row: string) => row.replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim());

/**
 * The sentences of a chunk: its lines (list items, headings) cut further at sentence ends. A table's row is one
 * sentence, under its header row (a two-row Markdown table): "Tandem | £28 | £40" says little without it.
 */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = [];
  let header: string[] | null = null;
  for (const line of text.split(/\n+/)) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (isTableRule(trimmed)) continue;
    if (isTableRow(trimmed)) {
      if (header === null) header = cellsOf(trimmed);
      else sentences.push([header, header.map(() => '---'), cellsOf(trimmed)].map((cells) => `| ${cells.join(' | ')} |`).join('\n'));
      continue;
    }
    header = null;
    for (const { segment } of sentenceSegmenter.segment(trimmed)) {
      const sentence = segment.trim();
      if (sentence !== '') sentences.push(sentence);
    }
  }
  return sentences;
}

const LIST_ITEM = /^(?:[-*+]|\d{1,9}[.)])\s+/;
const isTable = (part: string) => part.startsWith('|');

/**
 * The answer's sentences as Markdown: prose runs on, list items stay a list (one item alone is just its text),
 * and a table row stands apart as a table (rows of one table under their header once).
 */
export function joinParts(parts: readonly string[]): string {
  const items = parts.filter((part) => LIST_ITEM.test(part));
  const text = items.length === 1 ? parts.map((part) => part.replace(LIST_ITEM, '')) : [...parts];
  const headerOf = (table: string) => table.split('\n', 1)[0];
  return text.reduce((joined, part, index) => {
    if (index === 0) return part;
    const previous = text[index - 1]!;
    if (isTable(part) && isTable(previous) && headerOf(part) === headerOf(previous)) return `${joined}\n${part.split('\n').slice(2).join('\n')}`;
    if (isTable(part) || isTable(previous)) return `${joined}\n\n${part}`;
    if (LIST_ITEM.test(part)) return `${joined}\n${part}`;
    return LIST_ITEM.test(previous) ? `${joined}\n\n${part}` : `${joined} ${part}`;
  }, '');
}

/**
 * Whether a sentence goes on from the one before it: prose after prose, a list's item after its intro or the
 * item before; not prose after a list, nor a heading or a table.
 */
function continues(sentence: string, next: string): boolean {
  if (isTable(sentence) || isTable(next)) return false;
  if (LIST_ITEM.test(next)) return true;
  return !LIST_ITEM.test(sentence) && /[.!?:;)"'»”]$/.test(next);
}

const wordCount = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** The answer part of a Q&A chunk (its first line repeats the question, which is no answer). */
function bodyOf(hit: KnowledgeHit): string {
  const [first, ...rest] = hit.content.split(/\n\s*\n/);
  if (rest.length > 0 && first!.trim() === hit.title.trim()) return rest.join('\n\n');
  return hit.content;
}

/** A sentence of a retrieved chunk, weighed as an answer to the question. */
export interface Candidate {
  hit: KnowledgeHit;
  rank: number;
  index: number;
  sentences: string[];
  /** The weight of the question's words in the sentence itself. */
  matched: number;
  /** How well the sentence answers by itself (whether it joins another as part of the answer). */
  own: number;
  /** How well the sentence answers, read under its chunk's title and headings (which sentence answers). */
  score: number;
  /** Whether it holds the kind of fact the question asks for. */
  holdsKind: boolean;
  /** How sure a reply quoting it would be, in [0, 1] (see ANSWER_CONFIDENCE). */
  confidence: number;
}

/** How much of the question's weight a set of terms holds (terms of the question the chunk matched). */
function heldWeight(terms: ReadonlySet<string>, hit: KnowledgeHit): number {
  const weights = new Map<string, number>();
  for (const { term, idf } of hit.matched) if (terms.has(term)) weights.set(term, Math.max(weights.get(term) ?? 0, idf));
  let score = 0;
  for (const idf of weights.values()) score += idf;
  return score;
}

/** The index terms of a text, as its chunk's language analyses them. */
export const termSet = (text: string, hit: KnowledgeHit): Set<string> => new Set(indexTerms(text, hit.language as Language).split(' '));

/** Whether a chunk names every one of these words of the question. */
const namesAll = (hit: KnowledgeHit, words: readonly string[]): boolean => words.every((word) => hit.matched.some((term) => term.word === word));

/**
 * The chunks that may speak to the question: for a question about an offer ("Do you rent kayaks?"), only those
 * that name what it asks for; a page about renting bikes neither answers nor helps.
 */
export function aboutTheQuestion(question: string, hits: readonly KnowledgeHit[]): KnowledgeHit[] {
  const object = namedObject(question);
  return hits.filter((hit) => namesAll(hit, object));
}

/** The words naming what a question about an offer asks for, as the question's searchable words (a stopword is none). */
function namedObject(question: string): string[] {
  const object = askedObject(question);
  if (object.length === 0) return [];
  const searchable = new Set(queryWords(question).map((word) => word.word));
  return object.filter((word) => searchable.has(word));
}

/**
 * Every sentence of a chunk weighed as an answer: the question's words it holds by itself and under the chunk's
 * title and headings, and the kind of fact asked for. `rank` is the chunk's place among the hits.
 */
export function candidatesOf(hit: KnowledgeHit, rank: number, kinds: readonly FactKind[]): Candidate[] {
  const sentences = sentencesOf(bodyOf(hit));
  // The chunk holds what the question is about; its sentence holding the kind of fact asked for answers it.
  const topic = hit.matched.reduce((sum, term) => sum + term.idf, 0);
  // A sentence is read under its page's title and headings: "- Closed on Mondays" under "Old Town workshop: opening hours".
  const context = termSet([hit.title, ...hit.headingPath].join('\n'), hit);
  const questionTerms = new Set(hit.matched.map((term) => term.term));
  return sentences.map((sentence, index) => {
    const terms = termSet(sentence, hit);
    const matched = heldWeight(terms, hit);
    const inContext = heldWeight(new Set([...terms, ...context]), hit);
    const holds = holdsKind(sentence, kinds, (word) => questionTerms.has(termOf(word, hit.language as Language)));
    const asked = holds ? topic * KIND_WEIGHT : 0;
    // Within a chunk, earlier sentences break ties.
    const share = holds ? 1 : topic > 0 ? Math.min(1, inContext / topic) : 0;
    return {
      hit, rank, index, sentences, matched, holdsKind: holds,
      own: matched + asked - index * 0.001,
      score: inContext + matched * OWN_WORDS_BONUS + asked - index * 0.001,
      confidence: hit.confidence * (SENTENCE_SHARE_FLOOR + (1 - SENTENCE_SHARE_FLOOR) * share),
    };
  });
}

/**
 * Whether a sentence of a lower-ranked passage answers clearly better than the top passage's best. Retrieval
 * ranked the passages, so the lower the passage, the more its sentence must outscore the lead's (RANK_MARGIN a
 * place), and its passage must hold as much of the question; or it holds the kind of fact asked for, which the
 * lead does not, in words of the question of its own, and scores more. A sentence of the fourth passage that
 * merely repeats more of the question's words is not a better answer.
 */
function clearlyBetter(other: Candidate, lead: Candidate): boolean {
  if (other.holdsKind && !lead.holdsKind && other.matched > 0 && other.score > lead.score) return true;
  return other.hit.confidence >= lead.hit.confidence && other.score >= lead.score * (1 + RANK_MARGIN * (other.rank - lead.rank));
}

/**
 * The sentence that answers: the best of the top passage, unless one of another passage that holds about as
 * much of the question is clearly better. A question about an offer ("Do you rent kayaks?") is answered only
 * from a chunk that names what it asks for.
 */
export function answeringSentence(question: string, hits: readonly KnowledgeHit[]): Candidate | null {
  const kinds = askedKinds(question);
  const object = namedObject(question);
  const considered = hits.slice(0, CONSIDERED_HITS).filter((hit) => namesAll(hit, object));
  const best = Math.max(0, ...considered.map((hit) => hit.confidence));
  let lead: Candidate | null = null;
  const others: Candidate[] = [];
  considered.forEach((hit, rank) => {
    // A chunk that holds much less of the question than the best one does not answer it better.
    if (hit.confidence <= 0 || hit.confidence < best - CONFIDENCE_GAP) return;
    for (const candidate of candidatesOf(hit, rank, kinds)) {
      if (lead === null || lead.hit === hit) {
        if (lead === null || candidate.score > lead.score) lead = candidate;
      } else others.push(candidate);
    }
  });
  const top = lead as Candidate | null;
  if (!top) return null;
  return others.filter((other) => clearlyBetter(other, top)).sort((a, b) => b.score - a.score)[0] ?? top;
}

/** Whether a sentence is sure enough to be stated as the answer (ANSWER_CONFIDENCE, lower with evidence of its own). */
export function answers(question: string, candidate: Candidate): boolean {
  const evidence = candidate.holdsKind || namedObject(question).length > 0;
  return candidate.confidence >= (evidence ? ANSWER_CONFIDENCE_WITH_EVIDENCE : ANSWER_CONFIDENCE);
}

/**
 * The answer's text from its sentence: the sentence whole, however long (it is the one that answers), with up
 * to MAX_EXTRA_SENTENCES more of the same chunk that answer nearly as well (and are sure enough), and the next sentence when it goes on
 * from the first and the answer stays short. Its heading opens it when only the heading holds the question.
 */
export function answerText(question: string, pick: Candidate): string {
  // No sentence holds a question term (the chunk matched by its title): its opening says what it is about.
  const chosen = new Set([pick.own <= 0 ? 0 : pick.index]);
  candidatesOf(pick.hit, pick.rank, askedKinds(question))
    .filter((other) => !chosen.has(other.index) && other.matched > 0 && other.own >= pick.own * SECOND_SHARE && (other.holdsKind || other.confidence >= ANSWER_CONFIDENCE))
    .sort((a, b) => b.own - a.own)
    .slice(0, MAX_EXTRA_SENTENCES)
    .forEach((other) => chosen.add(other.index));
  const words = [...chosen].reduce((sum, index) => sum + wordCount(pick.sentences[index]!), 0);
  // The next sentence often completes the first (the price after the name): it joins while the answer stays short.
  const first = Math.min(...chosen);
  const next = pick.sentences[first + 1];
  if (next && continues(pick.sentences[first]!, next) && !chosen.has(first + 1) && words + wordCount(next) <= CONTINUATION_WORDS) chosen.add(first + 1);
  const parts = [...chosen].sort((a, b) => a - b).map((index) => pick.sentences[index]!);
  const { hit } = pick;
  // The sentence answers under its heading, which holds the question's words ("Who is the front desk manager?" under
  // "Aisha Nwosu – front desk manager"): the heading opens the answer, or the answer would not name what it is about.
  const heading = hit.headingPath.at(-1)?.trim();
  const lead = pick.matched <= 0 && heading && heading !== hit.title.trim() && heldWeight(termSet(heading, hit), hit) > 0 ? `${heading}\n\n` : '';
  return lead + joinParts(parts);
}

/** The document of a chunk, as an answer's source. */
export const sourceOf = (hit: KnowledgeHit): MessageSource => ({ source_id: hit.sourceId, document_id: hit.documentId, title: hit.title, url: hit.url });

/** The answer stated from the best hits with its confidence, or null when no sentence is sure enough to state. */
export function composeAnswer(question: string, hits: readonly KnowledgeHit[]): { content: string; sources: MessageSource[]; confidence: number } | null {
  const pick = answeringSentence(question, hits);
  if (!pick || !answers(question, pick)) return null;
  return { content: answerText(question, pick), sources: [sourceOf(pick.hit)], confidence: pick.confidence };
}

import { indexTerms, queryWords, termOf, type Language } from '../knowledge/analyzer.js';
import type { KnowledgeHit } from '../knowledge/chunks.js';
import { askedKinds, askedObject, holdsKind } from '../knowledge/question-frame.js';
import type { MessageSource } from './engine.js';

/**
 * The builtin provider's answer from knowledge: the one or two sentences of the retrieved chunks that best
 * answer the question, quoted as written (never a word the knowledge does not say), with their document
 * as the source. Deterministic, and quick: a few chunks of a few hundred words.
 */

/** A chunk's share of the question (`confidence`) below which the knowledge is taken not to answer it. */
export const MIN_CONFIDENCE = 0.4;
/** The same for a sentence holding the kind of fact the question asks for (a price for "how much"), itself evidence. */
export const MIN_CONFIDENCE_FOR_ASKED_KIND = 0.3;
// Chunks whose sentences compete for the answer.
const CONSIDERED_HITS = 4;
// An answer is one sentence, and a second when the two together stay this short.
const MAX_WORDS = 45;
// A further sentence of the chunk joins the answer when it scores at least this share of the best one.
const SECOND_SHARE = 0.5;

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
 * and a table row stands apart as a table.
 */
export function joinParts(parts: readonly string[]): string {
  const items = parts.filter((part) => LIST_ITEM.test(part));
  const text = items.length === 1 ? parts.map((part) => part.replace(LIST_ITEM, '')) : [...parts];
  return text.reduce((joined, part, index) => {
    if (index === 0) return part;
    const previous = text[index - 1]!;
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

interface Candidate {
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
}

/** How much of the question's weight a set of terms holds (terms of the question the chunk matched). */
function heldWeight(terms: ReadonlySet<string>, hit: KnowledgeHit): number {
  const weights = new Map<string, number>();
  for (const { term, idf } of hit.matched) if (terms.has(term)) weights.set(term, Math.max(weights.get(term) ?? 0, idf));
  let score = 0;
  for (const idf of weights.values()) score += idf;
  return score;
}

const termSet = (text: string, hit: KnowledgeHit) => new Set(indexTerms(text, hit.language as Language).split(' '));

/** The words naming what a question about an offer asks for, as the question's searchable words (a stopword is none). */
function namedObject(question: string): string[] {
  const object = askedObject(question);
  if (object.length === 0) return [];
  const searchable = new Set(queryWords(question).map((word) => word.word));
  return object.filter((word) => searchable.has(word));
}

/** The answer composed from the best hits, or null when the knowledge does not answer the question. */
export function composeAnswer(question: string, hits: readonly KnowledgeHit[]): { content: string; sources: MessageSource[] } | null {
  const kinds = askedKinds(question);
  // A question about an offer ("Do you rent kayaks?") is answered only by a chunk that names what it asks for.
  const object = namedObject(question);
  const considered = hits.slice(0, CONSIDERED_HITS).filter((hit) => object.every((word) => hit.matched.some((term) => term.word === word)));
  const best = Math.max(0, ...considered.map((hit) => hit.confidence));
  // Holding the very kind of fact asked for is evidence too: such a sentence answers on a little less of the question's
  // words. So is naming the very thing a question about an offer asks for ("Do you have trailers to pull children?").
  const floor = kinds.length > 0 || object.length > 0 ? MIN_CONFIDENCE_FOR_ASKED_KIND : MIN_CONFIDENCE;
  if (best < floor) return null;
  const candidates: Candidate[] = [];
  considered.forEach((hit, rank) => {
    // A chunk that holds less of the question than the best one does not answer it better.
    if (hit.confidence < floor || hit.confidence < best - 0.25) return;
    const sentences = sentencesOf(bodyOf(hit));
    // The chunk holds what the question is about; its sentence holding the kind of fact asked for answers it.
    const topic = hit.matched.reduce((sum, term) => sum + term.idf, 0);
    // A sentence is read under its page's title and headings: "- Closed on Mondays" under "Old Town workshop: opening hours".
    const context = termSet([hit.title, ...hit.headingPath].join('\n'), hit);
    const questionTerms = new Set(hit.matched.map((term) => term.term));
    sentences.forEach((sentence, index) => {
      const terms = termSet(sentence, hit);
      const matched = heldWeight(terms, hit);
      const inContext = heldWeight(new Set([...terms, ...context]), hit);
      const holds = holdsKind(sentence, kinds, (word) => questionTerms.has(termOf(word, hit.language as Language)));
      if (!holds && object.length === 0 && hit.confidence < MIN_CONFIDENCE) return;
      const asked = holds ? topic * KIND_WEIGHT : 0;
      // Ranked retrieval breaks ties between chunks; within one, earlier sentences do.
      const weigh = (held: number) => (held + asked) * (1 - rank * 0.1) - index * 0.001;
      candidates.push({ hit, rank, index, sentences, matched, own: weigh(matched), score: weigh(inContext + matched * OWN_WORDS_BONUS) });
    });
  });
  candidates.sort((a, b) => b.score - a.score);
  const pick = candidates[0];
  if (!pick) return null;
  // No sentence holds a question term (the chunk matched by its title): its opening says what it is about.
  const chosen = new Set([pick.own <= 0 ? 0 : pick.index]);
  let words = wordCount(pick.sentences[[...chosen][0]!]!);
  // Other sentences of the same chunk that answer nearly as well join while the answer stays short.
  for (const other of candidates.slice(1)) {
    if (other.hit !== pick.hit || other.own < pick.own * SECOND_SHARE || other.matched <= 0) continue;
    const length = wordCount(other.sentences[other.index]!);
    if (words + length > MAX_WORDS) continue;
    chosen.add(other.index);
    words += length;
  }
  // The next sentence often completes the first (the price after the name): it joins while the answer stays short.
  const first = Math.min(...chosen);
  const next = pick.sentences[first + 1];
  if (next && continues(pick.sentences[first]!, next) && !chosen.has(first + 1) && words + wordCount(next) <= MAX_WORDS) chosen.add(first + 1);
  const parts = [...chosen].sort((a, b) => a - b).map((index) => pick.sentences[index]!);
  const { hit } = pick;
  // The sentence answers under its heading, which holds the question's words ("Who is the front desk manager?" under
  // "Aisha Nwosu – front desk manager"): the heading opens the answer, or the answer would not name what it is about.
  const heading = hit.headingPath.at(-1)?.trim();
  const lead = pick.matched <= 0 && heading && heading !== hit.title.trim() && heldWeight(termSet(heading, hit), hit) > 0 ? `${heading}\n\n` : '';
  return { content: lead + joinParts(parts), sources: [{ source_id: hit.sourceId, document_id: hit.documentId, title: hit.title, url: hit.url }] };
}

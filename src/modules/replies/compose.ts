import { indexTerms, type Language } from '../knowledge/analyzer.js';
import type { KnowledgeHit } from '../knowledge/chunks.js';
import type { MessageSource } from './engine.js';

/**
 * The builtin provider's answer from knowledge: the one or two sentences of the retrieved chunks that best
 * answer the question, quoted as written (never a word the knowledge does not say), with their document
 * as the source. Deterministic, and quick: a few chunks of a few hundred words.
 */

/** A chunk's share of the question (`confidence`) below which the knowledge is taken not to answer it. */
export const MIN_CONFIDENCE = 0.45;
// Chunks whose sentences compete for the answer.
const CONSIDERED_HITS = 3;
// An answer is one sentence, and a second when the two together stay this short.
const MAX_WORDS = 45;

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** The sentences of a chunk: its lines (list items, headings) cut further at sentence ends. */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = [];
  for (const line of text.split(/\n+/)) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    for (const { segment } of sentenceSegmenter.segment(trimmed)) {
      const sentence = segment.trim();
      if (sentence !== '') sentences.push(sentence);
    }
  }
  return sentences;
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
  score: number;
}

/** How much of the question's weight a sentence holds (terms of the question the chunk matched, in the sentence). */
function sentenceScore(sentence: string, hit: KnowledgeHit): number {
  const terms = new Set(indexTerms(sentence, hit.language as Language).split(' '));
  const weights = new Map<string, number>();
  for (const { term, idf } of hit.matched) if (terms.has(term)) weights.set(term, Math.max(weights.get(term) ?? 0, idf));
  let score = 0;
  for (const idf of weights.values()) score += idf;
  return score;
}

// Questions whose answer is a number, a price, a time or a date, in the five languages.
const ASKS_FOR_A_FIGURE = /\b(how (much|many|long|old|far|heavy|big|often)|when|what time|which (day|days|month|year)|price|cost|cuanto|cuanta|cuantos|cuantas|cuando|que hora|precio|combien|quand|quelle heure|prix|wie (viel|viele|lange|alt|weit)|wann|preis|quanto|quanta|quantos|quantas|quando|que horas|preco)\b/;
const HOLDS_A_FIGURE = /[\p{N}£€$]/u;

/** The answer composed from the best hits, or null when the knowledge does not answer the question. */
export function composeAnswer(question: string, hits: readonly KnowledgeHit[]): { content: string; sources: MessageSource[] } | null {
  const wantsFigure = ASKS_FOR_A_FIGURE.test(question.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase());
  const best = hits[0];
  if (!best || best.confidence < MIN_CONFIDENCE) return null;
  let chosen: Candidate | null = null;
  hits.slice(0, CONSIDERED_HITS).forEach((hit, rank) => {
    // A chunk that holds less of the question than the best one does not answer it better.
    if (hit.confidence < MIN_CONFIDENCE || hit.confidence < best.confidence - 0.25) return;
    const sentences = sentencesOf(bodyOf(hit));
    sentences.forEach((sentence, index) => {
      // Ranked retrieval breaks ties between chunks; within one, earlier sentences do.
      const matched = sentenceScore(sentence, hit);
      // A question for a figure is answered by a sentence that holds one.
      const figure = wantsFigure && matched > 0 && HOLDS_A_FIGURE.test(sentence) ? 1 : 0;
      const score = (matched + figure) * (1 - rank * 0.1) - index * 0.001;
      if (!chosen || score > chosen.score) chosen = { hit, rank, index, sentences, score };
    });
  });
  const pick = chosen as Candidate | null;
  if (!pick) return null;
  // No sentence holds a question term (the chunk matched by its title): its opening says what it is about.
  const start = pick.score <= 0 ? 0 : pick.index;
  const parts = [pick.sentences[start]!];
  const next = pick.sentences[start + 1];
  // The next sentence often completes the first (the price after the name): it joins while the answer stays short.
  if (next && wordCount(parts[0]!) + wordCount(next) <= MAX_WORDS) parts.push(next);
  const { hit } = pick;
  return { content: parts.join(' '), sources: [{ source_id: hit.sourceId, document_id: hit.documentId, title: hit.title, url: hit.url }] };
}

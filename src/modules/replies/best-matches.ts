import { indexTerms, type Language } from '../knowledge/analyzer.js';
import type { KnowledgeHit } from '../knowledge/chunks.js';
import { askedKinds } from '../knowledge/question-frame.js';
import { aboutTheQuestion, BEST_MATCH_CONFIDENCE, candidatesOf, sourceOf } from './compose.js';
import type { MessageSource } from './engine.js';

/**
 * The builtin provider's `best_matches` reply: when no sentence is sure enough to be stated as the answer, the
 * documents whose passages hold a fair share of the question, as links, each with the line of it that holds most
 * of the question. A visitor can judge a page; a wrong answer stated plainly misleads.
 */

/** Documents a best-matches reply lists at most. */
export const MAX_BEST_MATCHES = 3;
// A snippet is at most this many words of its sentence: the stretch holding most of the question's words.
const SNIPPET_WORDS = 24;
// How many words of the sentence come before the first of the question's, when a snippet is cut.
const SNIPPET_LEAD = 4;

/** A document that may help, and the line of it that holds most of the question. */
export interface BestMatch {
  source: MessageSource;
  snippet: string;
}

/**
 * The passages that may help, one per document, best first: those holding at least BEST_MATCH_CONFIDENCE of the
 * question (and, for a question about an offer, naming what it asks for).
 */
export function bestMatches(question: string, hits: readonly KnowledgeHit[]): BestMatch[] {
  const kinds = askedKinds(question);
  const matches: BestMatch[] = [];
  const seen = new Set<string>();
  aboutTheQuestion(question, hits).forEach((hit, rank) => {
    if (matches.length >= MAX_BEST_MATCHES || hit.confidence < BEST_MATCH_CONFIDENCE || seen.has(hit.documentId)) return;
    const best = candidatesOf(hit, rank, kinds).sort((a, b) => b.score - a.score)[0];
    if (!best) return;
    seen.add(hit.documentId);
    matches.push({ source: sourceOf(hit), snippet: snippetOf(best.sentences[best.index]!, hit) });
  });
  return matches;
}

/** A sentence on one line: a table row as "Header: cell, …", list and heading marks dropped. */
function oneLine(sentence: string): string {
  const rows = sentence.split('\n').filter((line) => !/^[\s|:-]+$/.test(line));
  if (rows.length === 2 && rows.every((row) => row.trim().startsWith('|'))) {
    const cells = rows.map((row) => row.trim().replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim()));
    return cells[1]!.map((cell, index) => (cells[0]![index] ? `${cells[0]![index]}: ${cell}` : cell)).join(', ');
  }
  return sentence.replace(/^\s*(?:[-*+]|\d{1,9}[.)]|#{1,6})\s+/, '').replace(/\s+/g, ' ').trim();
}

/** The stretch of SNIPPET_WORDS words of a sentence holding most of the question's terms, "…" where it was cut. */
function snippetOf(sentence: string, hit: KnowledgeHit): string {
  const words = oneLine(sentence).split(' ');
  if (words.length <= SNIPPET_WORDS) return words.join(' ');
  const question = new Set(hit.matched.map((term) => term.term));
  const holds = words.map((word) => indexTerms(word, hit.language as Language).split(' ').some((term) => question.has(term)) ? 1 : 0);
  // The window holding most of the question's words, opening a few words before the first of them.
  let start = 0;
  let best = { count: -1, offset: Infinity };
  for (let from = 0; from + SNIPPET_WORDS <= words.length; from++) {
    const window = holds.slice(from, from + SNIPPET_WORDS);
    const count = window.reduce<number>((sum, held) => sum + held, 0);
    const offset = Math.abs(window.indexOf(1) - SNIPPET_LEAD);
    if (count > best.count || (count === best.count && offset < best.offset)) [start, best] = [from, { count, offset }];
  }
  const end = start + SNIPPET_WORDS;
  return `${start > 0 ? '…' : ''}${words.slice(start, end).join(' ')}${end < words.length ? '…' : ''}`;
}

// A link's address may not hold parentheses or spaces in Markdown.
const URL_ESCAPES: Record<string, string> = { '(': '%28', ')': '%29' };
// Markdown's inline marks, escaped in a document's title (the widget reads \-escapes).
const escapeMarks = (text: string) => text.replace(/[\\`*_[\]]/g, '\\$&');

/** The list of a best-matches reply, in Markdown: "- [Title](url): snippet" (the title in bold when there is no address). */
export function bestMatchesList(matches: readonly BestMatch[]): string {
  return matches.map(({ source, snippet }) => {
    const title = escapeMarks(source.title.trim() || source.url || '');
    const named = source.url ? `[${title}](${source.url.replace(/[()\s]/g, (char) => URL_ESCAPES[char] ?? '%20')})` : `**${title}**`;
    return `- ${named}: ${snippet}`;
  }).join('\n');
}

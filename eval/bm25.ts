/**
 * The baseline the public benchmark compares retrieval with: a plain Okapi BM25 (k1 1.2, b 0.75) over one
 * agent's paragraphs, with the Snowball stemmer and the stopword list of the language (@orama/stemmers and
 * @orama/stopwords, the same packages the service uses, but none of its ranking). It runs in the evaluation's
 * process, on the same paragraphs the service ingested.
 */
import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stemmer as spanishStemmer } from '@orama/stemmers/spanish';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import { stopwords as spanishStopwords } from '@orama/stopwords/spanish';

const K1 = 1.2;
const B = 0.75;

const ANALYZERS = {
  en: { stem: englishStemmer, stopwords: new Set(englishStopwords) },
  es: { stem: spanishStemmer, stopwords: new Set(spanishStopwords) },
} as const;

/** A language the baseline can analyse. */
export type Bm25Language = keyof typeof ANALYZERS;

/** The terms of a text: lower-cased words (letters and digits), stopwords dropped, stemmed. */
export function bm25Terms(text: string, language: Bm25Language): string[] {
  const { stem, stopwords } = ANALYZERS[language];
  const words = text.toLowerCase().normalize('NFC').match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? [];
  return words.filter((word) => !stopwords.has(word)).map((word) => stem(word.replace(/'s$/, '')));
}

/** A BM25 index over documents identified by key. */
export interface Bm25Index<K> {
  /** The keys of the best documents for the query, best first (at most `limit`; documents sharing no term are left out). */
  search(query: string, limit: number): K[];
}

/** Indexes `documents` (key and text) for BM25 search in `language`. */
export function bm25Index<K>(documents: { key: K; text: string }[], language: Bm25Language): Bm25Index<K> {
  const indexed = documents.map((document) => {
    const counts = new Map<string, number>();
    const terms = bm25Terms(document.text, language);
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    return { key: document.key, counts, length: terms.length };
  });
  const documentFrequency = new Map<string, number>();
  for (const document of indexed) for (const term of document.counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const total = indexed.length;
  const averageLength = indexed.reduce((sum, document) => sum + document.length, 0) / Math.max(total, 1);
  const idf = (term: string) => {
    const frequency = documentFrequency.get(term) ?? 0;
    return Math.log(1 + (total - frequency + 0.5) / (frequency + 0.5));
  };
  return {
    search(query, limit) {
      const terms = [...new Set(bm25Terms(query, language))];
      const scored = indexed
        .map((document) => {
          let score = 0;
          for (const term of terms) {
            const frequency = document.counts.get(term);
            if (!frequency) continue;
            score += idf(term) * ((frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * document.length) / averageLength)));
          }
          return { key: document.key, score };
        })
        .filter((entry) => entry.score > 0);
      scored.sort((a, b) => b.score - a.score);
      return scored.slice(0, limit).map((entry) => entry.key);
    },
  };
}

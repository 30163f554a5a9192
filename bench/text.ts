import { dictionary } from '@zxcvbn-ts/language-common';

/** English-like text drawn from a fixed seed, so that runs compare (`syntheticText`). */
export interface SyntheticText {
  /** A uniform number in [0, 1). */
  random(): number;
  /** One word: function words most frequent, then a 7,776-word list with Zipf (s = 1) frequencies. */
  word(): string;
  sentence(words: number): string;
  /** 6–11 sentences of 8–19 words. */
  paragraph(): string;
  /** 3–6 words and a question mark, 15 % of them with a typo in one word of 5+ letters. */
  question(): string;
}

const FUNCTION_WORDS = 'the of and to a in is you that it for on are with as we be at this have from or by our your can will not all an if us do more'.split(' ');

/**
 * A text generator for the knowledge benchmarks: the same seed gives the same words, questions and pages,
 * whatever else the run did before (each benchmark makes its own generator).
 */
export function syntheticText(initialSeed = 0x5eed): SyntheticText {
  // mulberry32
  let seed = initialSeed;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const contentWords = [...(dictionary['diceware-common'] as string[])];
  for (let i = contentWords.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [contentWords[i], contentWords[j]] = [contentWords[j]!, contentWords[i]!];
  }
  const ranked = [...FUNCTION_WORDS, ...contentWords];
  // Zipf (s = 1): the cumulative weights, sampled by binary search.
  const cumulative: number[] = [];
  ranked.reduce((sum, _, rank) => (cumulative.push(sum + 1 / (rank + 1)), sum + 1 / (rank + 1)), 0);
  const word = () => {
    const target = random() * cumulative.at(-1)!;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return ranked[low]!;
  };
  const sentence = (words: number) => Array.from({ length: words }, word).join(' ');
  const paragraph = () => Array.from({ length: 6 + Math.floor(random() * 6) }, () => `${sentence(8 + Math.floor(random() * 12))}.`).join(' ');
  const typo = (text: string) => {
    const at = Math.floor(random() * text.length);
    return random() < 0.5 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + 'x' + text.slice(at + 1);
  };
  const question = () => {
    const words = Array.from({ length: 3 + Math.floor(random() * 4) }, word);
    if (random() < 0.15) {
      const i = words.findIndex((w) => w.length >= 5);
      if (i >= 0) words[i] = typo(words[i]!);
    }
    return `${words.join(' ')}?`;
  };
  return { random, word, sentence, paragraph, question };
}

/** The value at percentile p (0–100) of an ascending array. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

import { stemmer as germanStemmer } from '@orama/stemmers/german';
import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stemmer as spanishStemmer } from '@orama/stemmers/spanish';
import { stemmer as frenchStemmer } from '@orama/stemmers/french';
import { stemmer as portugueseStemmer } from '@orama/stemmers/portuguese';
import { stopwords as germanStopwords } from '@orama/stopwords/german';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import { stopwords as spanishStopwords } from '@orama/stopwords/spanish';
import { stopwords as frenchStopwords } from '@orama/stopwords/french';
import { stopwords as portugueseStopwords } from '@orama/stopwords/portuguese';
import { detectAll } from 'tinyld';

/** The languages whose words are stemmed; anything else is `other` (lowercased and folded, not stemmed). */
export type Language = 'en' | 'es' | 'fr' | 'de' | 'pt' | 'other';
/** The five languages with a stemmer and stopwords. */
export type Stemmed = Exclude<Language, 'other'>;

export const STEMMED_LANGUAGES: readonly Stemmed[] = ['en', 'es', 'fr', 'de', 'pt'];

const STEMMERS: Record<Stemmed, (word: string) => string> = {
  en: englishStemmer, es: spanishStemmer, fr: frenchStemmer, de: germanStemmer, pt: portugueseStemmer,
};

/** Drops combining marks: "é" → "e", "ü" → "u" (ß, ø and the like are letters of their own and stay). */
export function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}+/gu, '').normalize('NFC');
}

// Both spellings of each stopword: visitors often type Spanish or French without accents.
function stopwordSet(words: readonly string[]): ReadonlySet<string> {
  return new Set(words.flatMap((word) => [word, fold(word)]).filter((word) => !/['’]/.test(word)));
}

const STOPWORDS: Record<Stemmed, ReadonlySet<string>> = {
  en: stopwordSet([...englishStopwords, 'hi', 'hello', 'hey', 'please', 'thanks', 'thank', 'ok', 'okay', 'yes', 'im', 'dont', 'tell']),
  es: stopwordSet([...spanishStopwords, 'hola', 'gracias']),
  fr: stopwordSet([...frenchStopwords, 'bonjour', 'merci']),
  de: stopwordSet([...germanStopwords, 'hallo', 'danke']),
  pt: stopwordSet([...portugueseStopwords, 'ola', 'obrigado', 'obrigada']),
};

const MAX_WORD_LENGTH = 64;
const MAX_QUERY_WORDS = 32;
// Below this many letters the detector guesses; the text is then treated as of no known language.
const MIN_DETECTABLE_LETTERS = 12;
const DETECTION_SAMPLE = 300;
// Symbols, digits and table rules say nothing of a language and mislead the detector ("a | b" reads as Hindi).
const NOT_PROSE = /[^\p{L}\p{M}\s.,;:!?¿¡'’()-]+/gu;
// A text this many words long, this share of them stopwords of one language, is in that language (byStopwords).
const MIN_STOPWORD_EVIDENCE = 6;
const STOPWORD_SHARE = 0.2;
const STOPWORD_MARGIN = 3;

// A lone letter hyphenated to a word makes one word with it: "e-bike" is "ebike" (as often typed), "e-mail" "email".
const LETTER_PREFIX = /(?<![\p{L}\p{M}\p{N}-])(\p{L})-(?=\p{L}{2})/gu;

/**
 * The words of a text: NFKC-normalised, lowercased runs of letters (with their marks) and digits. Anything
 * else separates words (apostrophes too: "l'adresse" is "l" + "adresse"), so no punctuation, quote or
 * operator of any query language survives. A single letter hyphenated to a word is its prefix ("e-bike": "ebike").
 */
export function wordsOf(text: string): string[] {
  return writtenWords(text.toLowerCase());
}

/** The words of a text as wordsOf cuts them, as written (case kept). */
export function writtenWords(text: string): string[] {
  return text.normalize('NFKC').replace(LETTER_PREFIX, '$1').match(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu) ?? [];
}

/** The language of a text among the five stemmed ones, or `other` (another language, or too little text to tell). */
export function detectLanguage(text: string): Language {
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  if (letters < MIN_DETECTABLE_LETTERS) return 'other';
  // The opening of a long text tells its language as well as the whole, at a fraction of the cost.
  const prose = text.slice(0, DETECTION_SAMPLE * 4).replace(NOT_PROSE, ' ').replace(/\s+/g, ' ').slice(0, DETECTION_SAMPLE);
  const best = detectAll(prose)[0]?.lang;
  // Clear evidence of stopwords wins over the detector's guess: it reads letter sequences, and "The TEU sets out
  // the values and aims of the Union" looks Portuguese to it.
  const byWords = byStopwords(prose);
  if (byWords) return byWords;
  if ((STEMMED_LANGUAGES as readonly string[]).includes(best ?? '')) return best as Stemmed;
  return 'other';
}

/**
 * The one of the five languages whose stopwords make up a good share of a text's words, if any. The detector
 * reads letter sequences, and a short text full of names ("12 Quay Street, Port Elwen…") can look Romanian or
 * Vietnamese to it, an English one with a rare acronym Portuguese; a text a fifth of whose words are "the",
 * "of", "you"… (and three times fewer of any other language's) is English all the same.
 */
function byStopwords(text: string): Stemmed | null {
  const words = wordsOf(text);
  if (words.length < MIN_STOPWORD_EVIDENCE) return null;
  const counts = STEMMED_LANGUAGES.map((language) => ({ language, count: words.filter((word) => STOPWORDS[language].has(word)).length }))
    .sort((a, b) => b.count - a.count);
  const [first, second] = counts as [typeof counts[0], typeof counts[0]];
  // Neighbours share stopwords ("la", "de", "per"): an Italian text is a third Spanish stopwords, and about as much French.
  return first.count >= words.length * STOPWORD_SHARE && first.count >= second.count * STOPWORD_MARGIN ? first.language : null;
}

// One letter says nothing (a digit or an ideograph may: "5", "店").
function meaningful(word: string): boolean {
  return word.length <= MAX_WORD_LENGTH && (word.length > 1 || /[\p{N}\p{Script=Han}]/u.test(word));
}

/** Whether a (lowercased) word is a stopword of one of the languages. */
export function isStopword(word: string, languages: readonly Stemmed[]): boolean {
  return languages.some((language) => STOPWORDS[language].has(word));
}

/**
 * The index term of one word: stemmed (words with digits are codes: kept whole), then folded. A word the
 * stemmer would cut down to a stopword of the language keeps its own form ("downs" is not "down"), as a
 * question's word does (queryWords).
 */
export function termOf(word: string, language: Language): string {
  if (language === 'other' || /\p{N}/u.test(word)) return fold(word);
  const stemmed = STEMMERS[language](word);
  return fold(stemmed !== word && isStopword(stemmed, [language]) ? word : stemmed);
}

/** The index text of a chunk: lowercased, diacritics folded, stopwords dropped, stemmed in its language. */
export function indexTerms(text: string, language: Language): string {
  const stopLanguages = language === 'other' ? [] : [language];
  return wordsOf(text)
    .filter((word) => meaningful(word) && !isStopword(word, stopLanguages) && !isStopword(fold(word), stopLanguages))
    .map((word) => termOf(word, language))
    .join(' ');
}

/** The distinct folded words of a text that can be indexed: the vocabulary a chunk adds to its agent. */
export function vocabularyOf(text: string, language: Language): Map<string, string> {
  const stopLanguages = language === 'other' ? [] : [language];
  const words = new Map<string, string>();
  for (const word of wordsOf(text)) {
    if (!meaningful(word) || isStopword(word, stopLanguages)) continue;
    const folded = fold(word);
    if (!words.has(folded) && !isStopword(folded, stopLanguages)) words.set(folded, termOf(word, language));
  }
  return words;
}

/** A word of a question and the index terms it may stand for (its stems in each language, and itself). */
export interface QueryWord {
  /** Folded, lowercased: what typo tolerance compares with the agent's vocabulary. */
  word: string;
  /** Lowercased as written (accents kept): what is stemmed. */
  raw: string;
  terms: string[];
  /** Capitalised inside a sentence ("Paris", "MIPS"): a name, which is not a misspelling of a common word. */
  name: boolean;
}

// A capitalised word not at the start of a sentence (after an opening mark or quote, if any).
const NAME = /(?<![.!?¿¡]\s*["'“«(]?\s*|^\s*["'“«(]?\s*)(?<![\p{L}\p{M}\p{N}-])\p{Lu}[\p{L}\p{M}\p{N}]*/gu;

/** The folded, lowercased words written as names in a text; none in German, where every noun is capitalised. */
function namesOf(text: string, language: Language): Set<string> {
  if (language === 'de') return new Set();
  return new Set([...text.normalize('NFKC').matchAll(NAME)].map((match) => fold(match[0].toLowerCase())));
}

/**
 * The language whose stopwords a question is cut by: of the languages it may be in (`expected`: the agent's, the
 * visitor's, its knowledge's; any of the five when none is known), the one most of its words are stopwords of
 * (the detected language, then English, breaking ties). Detection guesses on a short question ("What does the
 * TEU say?" reads as Portuguese, whose stopwords hold "teu"); its stopwords do not ("what", "does", "the").
 */
export function questionLanguage(question: string, expected: readonly Stemmed[] = []): Stemmed {
  const candidates = expected.length > 0 ? expected : STEMMED_LANGUAGES;
  const detected = detectLanguage(question);
  const words = wordsOf(question);
  const stopwordsOf = (language: Stemmed) => words.filter((word) => isStopword(word, [language]) || isStopword(fold(word), [language])).length;
  const preference = (language: Stemmed) => stopwordsOf(language) * 4 + (language === detected ? 2 : 0) + (language === 'en' ? 1 : 0);
  return [...candidates].sort((a, b) => preference(b) - preference(a))[0]!;
}

/**
 * The searchable words of a visitor's question. Its stopwords are those of its language (questionLanguage, among
 * the `expected` ones) and of English when the conversation may be in English (visitors mix in English words);
 * a short question's language is uncertain, so each word is stemmed in all five languages (a stem that no chunk
 * holds simply matches nothing; one that is a stopword is left out).
 */
export function queryWords(question: string, expected: readonly Stemmed[] = []): QueryWord[] {
  const language = questionLanguage(question, expected);
  const english = expected.length === 0 || expected.includes('en');
  const stopLanguages: readonly Stemmed[] = language === 'en' || !english ? [language] : [language, 'en'];
  const names = namesOf(question, language);
  const result = new Map<string, QueryWord>();
  for (const word of wordsOf(question)) {
    const folded = fold(word);
    if (!meaningful(word) || isStopword(word, stopLanguages) || isStopword(folded, stopLanguages) || result.has(folded)) continue;
    const terms = new Set([folded]);
    // A stem that is a stopword of one of the languages ("paris" as Portuguese: "par") would match that word's kin, not it.
    if (!/\p{N}/u.test(word)) for (const stemming of STEMMED_LANGUAGES) {
      const term = termOf(word, stemming);
      if (!isStopword(term, STEMMED_LANGUAGES)) terms.add(term);
    }
    result.set(folded, { word: folded, raw: word, terms: [...terms], name: names.has(folded) });
    if (result.size === MAX_QUERY_WORDS) break;
  }
  return [...result.values()];
}

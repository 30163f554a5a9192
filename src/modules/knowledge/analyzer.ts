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
type Stemmed = Exclude<Language, 'other'>;

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

/**
 * The words of a text: NFKC-normalised, lowercased runs of letters (with their marks) and digits. Anything
 * else separates words (apostrophes too: "l'adresse" is "l" + "adresse"), so no punctuation, quote or
 * operator of any query language survives.
 */
export function wordsOf(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu) ?? [];
}

/** The language of a text among the five stemmed ones, or `other` (another language, or too little text to tell). */
export function detectLanguage(text: string): Language {
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  if (letters < MIN_DETECTABLE_LETTERS) return 'other';
  // The opening of a long text tells its language as well as the whole, at a fraction of the cost.
  const best = detectAll(text.length > DETECTION_SAMPLE ? text.slice(0, DETECTION_SAMPLE) : text)[0]?.lang;
  return (STEMMED_LANGUAGES as readonly string[]).includes(best ?? '') ? (best as Stemmed) : 'other';
}

// One letter says nothing (a digit or an ideograph may: "5", "店").
function meaningful(word: string): boolean {
  return word.length <= MAX_WORD_LENGTH && (word.length > 1 || /[\p{N}\p{Script=Han}]/u.test(word));
}

function isStopword(word: string, languages: readonly Stemmed[]): boolean {
  return languages.some((language) => STOPWORDS[language].has(word));
}

/** The index term of one word: stemmed (words with digits are codes: kept whole), then folded. */
export function termOf(word: string, language: Language): string {
  const stemmed = language === 'other' || /\p{N}/u.test(word) ? word : STEMMERS[language](word);
  return fold(stemmed);
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
}

/**
 * The searchable words of a visitor's question. A short question's language is uncertain, so each word is
 * stemmed in all five languages (a stem that no chunk holds simply matches nothing); stopwords are those of
 * the detected language and English, or of all five when the language is unknown.
 */
export function queryWords(question: string): QueryWord[] {
  const detected = detectLanguage(question);
  const stopLanguages: readonly Stemmed[] = detected === 'other' ? STEMMED_LANGUAGES : detected === 'en' ? ['en'] : [detected, 'en'];
  const result = new Map<string, QueryWord>();
  for (const word of wordsOf(question)) {
    const folded = fold(word);
    if (!meaningful(word) || isStopword(word, stopLanguages) || isStopword(folded, stopLanguages) || result.has(folded)) continue;
    const terms = new Set([folded]);
    if (!/\p{N}/u.test(word)) for (const language of STEMMED_LANGUAGES) terms.add(termOf(word, language));
    result.set(folded, { word: folded, raw: word, terms: [...terms] });
    if (result.size === MAX_QUERY_WORDS) break;
  }
  return [...result.values()];
}

import { detectLanguage, type Stemmed } from '../knowledge/analyzer.js';
import { LANGS, type Lang } from './intents.js';

/**
 * The visitor's language, for the agent's own words (declines, best matches, handoffs, the fallback). A
 * question's detected language is a guess on short text ("What does the TEU say?" reads as Portuguese), so it
 * counts only where it is a language the conversation can be in, or when the question is long enough to tell.
 */

// A question of this many letters tells its language whatever the agent speaks.
const RELIABLE_LETTERS = 40;

const isLang = (value: string | null | undefined): value is Lang => (LANGS as readonly string[]).includes(value ?? '');

/** The agent language of a BCP 47 tag ("es-MX" → es), or null for another language or none. */
export function langOfLocale(locale: string | null | undefined): Lang | null {
  const primary = (locale ?? '').split('-', 1)[0]!.toLowerCase();
  return isLang(primary) ? primary : null;
}

/** What tells the visitor's language, strongest last: the agent's, its knowledge's, the browser's. */
export interface LanguageHints {
  /** The agent's `language` (`auto` or one of the five). */
  agent: string | null | undefined;
  /** The conversation's locale, as the widget sent it (the visitor's browser). */
  locale: string | null | undefined;
  /** The languages of the agent's knowledge (its retrieved chunks'), when known. */
  knowledge?: readonly string[];
}

/**
 * The languages a visitor's message may be in: the browser's, the agent's (when set) and its knowledge's; empty
 * when nothing is known (any of the five).
 */
export function expectedLanguages(hints: LanguageHints): Stemmed[] {
  const found = [langOfLocale(hints.locale), isLang(hints.agent) ? hints.agent : null, ...(hints.knowledge ?? []).filter(isLang)];
  return [...new Set(found.filter((language): language is Lang => language !== null))];
}

/**
 * The language to answer a message in: the message's own when it is one the conversation can be in (or nothing
 * is known of those, or the message is long enough to tell), else the browser's, the agent's, the knowledge's,
 * else English.
 */
export function replyLanguage(text: string, hints: LanguageHints): Lang {
  const detected = detectLanguage(text);
  const expected = expectedLanguages(hints);
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  if (isLang(detected) && (expected.length === 0 || expected.includes(detected) || letters >= RELIABLE_LETTERS)) return detected;
  return langOfLocale(hints.locale) ?? (isLang(hints.agent) ? hints.agent : null) ?? expected[0] ?? 'en';
}

/**
 * The evaluation's questions (eval/questions.json) and the fixture's hand-written sources (Q&A pairs and a
 * text source), with their types. Every answerable question names ONE gold document and quotes the passage
 * of it that answers the question (`answer`), which test/eval/fixture.test.ts checks against the fixture.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The languages of the fixture. */
export const LANGUAGES = ['en', 'es', 'fr'] as const;
/** A language of the fixture. */
export type Language = (typeof LANGUAGES)[number];

/** How a question is asked: the page's own words, other words, with typos, or about nothing in the fixture. */
export const KINDS = ['direct', 'paraphrase', 'typo', 'unanswerable'] as const;
/** The kind of a question. */
export type Kind = (typeof KINDS)[number];

/** The one document that answers a question: a page of the site (its path), an uploaded file, a Q&A or a text source. */
export type Gold = { type: 'page'; path: string } | { type: 'file'; name: string } | { type: 'qa'; question: string } | { type: 'text'; title: string };

/** One evaluation question; gold and answer are null for unanswerable questions. */
export interface Question {
  id: string;
  question: string;
  language: Language;
  kind: Kind;
  gold: Gold | null;
  /** A passage of the gold document that answers the question, word for word (null where `fact` is given). */
  answer: string | null;
  /** The short fact a correct reply must state (e.g. "£62"), where the fixture names one instead of a passage. */
  fact?: string | null;
}

/** A hand-written Q&A source. */
export interface QaPair { question: string; answer: string }

/** A hand-written text source. */
export interface TextSource { title: string; content: string }

const file = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

/** All questions, in file order. */
export function loadQuestions(): Question[] {
  return JSON.parse(fs.readFileSync(file('./questions.json'), 'utf8')) as Question[];
}

/** The Q&A pairs added as `qa` sources, one source each. */
export function loadQaPairs(): QaPair[] {
  return JSON.parse(fs.readFileSync(file('./fixture/qa.json'), 'utf8')) as QaPair[];
}

/** The text source: a Markdown file whose first heading is its title. */
export function loadTextSource(): TextSource {
  const markdown = fs.readFileSync(file('./fixture/documents/holiday-opening.md'), 'utf8');
  const [first, ...rest] = markdown.split('\n');
  return { title: (first ?? '').replace(/^#\s*/, '').trim(), content: rest.join('\n').trim() };
}

/**
 * The smoke subset (npm run eval -- --smoke, and test/eval/eval-smoke.test.ts): 15 answerable questions over
 * every language, kind and kind of gold (page, PDF, DOCX, Q&A).
 */
export const SMOKE_QUESTION_IDS: readonly string[] = [
  'en-014', 'en-019', 'en-027', 'en-029', 'en-054', 'en-066', 'en-133', 'en-139', 'en-143', 'en-148',
  'es-006', 'es-013', 'es-022',
  'fr-004', 'fr-016',
];

/** A page path as the crawler may present it: `/x/index.html` and `/x/` are the same page. */
export function normalisePagePath(path: string): string {
  return path.replace(/index\.html$/, '').replace(/\/+$/, '') || '/';
}

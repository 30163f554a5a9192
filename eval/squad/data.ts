/**
 * The public benchmark's data: the committed SQuAD 2.0 train subset (eval/squad/README.md), its questions, the
 * deterministic sample a default run asks, and SQuAD's answer normalisation.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';

/** A question of the subset; `answers` is null for an unanswerable one. */
export interface SquadQuestion {
  id: string;
  language: 'en';
  article: string;
  /** 0-based index of the paragraph the question was written on (its gold paragraph when answerable). */
  paragraph: number;
  question: string;
  answers: string[] | null;
}

/** An article: its title and paragraphs, each paragraph with its questions. */
export interface SquadArticle {
  title: string;
  paragraphs: { context: string; qas: { id: string; question: string; answers?: string[]; unanswerable?: true }[] }[];
}

/** The subset's articles, in the official file's order. */
export function loadSquadArticles(): SquadArticle[] {
  const file = new URL('./train-v2.0-first10.en.json', import.meta.url);
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { articles: SquadArticle[] }).articles;
}

/** Every question of the articles, in file order. */
export function squadQuestions(articles: SquadArticle[]): SquadQuestion[] {
  return articles.flatMap((article) => article.paragraphs.flatMap((paragraph, index) => paragraph.qas.map((qa) => ({
    id: qa.id, language: 'en' as const, article: article.title, paragraph: index, question: qa.question, answers: qa.unanswerable ? null : qa.answers ?? [],
  }))));
}

/**
 * A deterministic sample of one question in `every` (by a hash of the question id, so the sample does not
 * follow the file's order and is the same on every run); `every` 1 keeps them all.
 */
export function sampleQuestions(questions: SquadQuestion[], every: number): SquadQuestion[] {
  if (every <= 1) return questions;
  return questions.filter((question) => createHash('sha256').update(question.id).digest().readUInt32BE(0) % every === 0);
}

/** SQuAD's answer normalisation: lower case, no punctuation, no articles (a, an, the), single spaces. */
export function squadNormalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether the reply contains one of the gold answers, as whole words after SQuAD normalisation. */
export function containsGoldAnswer(reply: string, answers: string[]): boolean {
  const haystack = ` ${squadNormalise(reply)} `;
  return answers.some((answer) => {
    const needle = squadNormalise(answer);
    return needle.length > 0 && haystack.includes(` ${needle} `);
  });
}

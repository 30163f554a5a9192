/**
 * Rebuilds the committed SQuAD 2.0 subset (eval/squad/train-v2.0-first10.en.json) from a SQuAD 2.0 train file:
 * the first ARTICLE_COUNT articles in file order, every paragraph and every question of each, answerable and
 * unanswerable. Only what the evaluation reads is kept: answer character offsets, `plausible_answers` of the
 * unanswerable questions and the `version` field are cut, and duplicate answer texts are merged.
 *
 *   npx tsx eval/squad/make-subset.ts path/to/train-v2.0.json
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** How many articles the subset takes, from the start of the train file. */
export const ARTICLE_COUNT = 10;

interface RawQuestion { id: string; question: string; is_impossible?: boolean; answers: { text: string }[] }
interface RawArticle { title: string; paragraphs: { context: string; qas: RawQuestion[] }[] }

const [input] = process.argv.slice(2);
if (!input) {
  console.error('usage: npx tsx eval/squad/make-subset.ts <train-v2.0.json>');
  process.exit(2);
}
const raw = JSON.parse(fs.readFileSync(input, 'utf8')) as { data: RawArticle[] };
const articles = raw.data.slice(0, ARTICLE_COUNT).map((article) => ({
  title: article.title.replace(/_/g, ' '),
  paragraphs: article.paragraphs.map((paragraph) => ({
    context: paragraph.context,
    qas: paragraph.qas.map((qa) => ({
      id: qa.id,
      question: qa.question.trim(),
      ...(qa.is_impossible ? { unanswerable: true } : { answers: [...new Set(qa.answers.map((answer) => answer.text))] }),
    })),
  })),
}));
const target = path.join(path.dirname(fileURLToPath(import.meta.url)), 'train-v2.0-first10.en.json');
// One article per line: small diffs, still one JSON document.
fs.writeFileSync(target, `{"articles":[\n${articles.map((article) => JSON.stringify(article)).join(',\n')}\n]}\n`);
console.log(`wrote ${target}: ${articles.length} articles`);

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folded } from '../../eval/answers.js';
import { clinicFixture } from '../../eval/fixtures.js';
import { makeDocuments, type GeneratedDocument } from '../../eval/fixture/make-documents.js';
import { fixturePages } from '../../eval/fixture/site-server.js';

// The second business fixture (eval/clinic): a dental clinic's website with real-world furniture, a Spanish PDF,
// an English DOCX price list with a table, Q&A and text sources, and questions whose gold fact must be stated
// in a correct reply. These tests keep the fixture honest: every fact is in its one gold document.

const fixture = clinicFixture();
const pages = fixturePages(fixture.siteDir);
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
const pageDocument = (page: string) => parseHTML(fs.readFileSync(path.join(fixture.siteDir, page), 'utf8')).document;

/** A page's main content (its <article>), cells and elements apart. */
function articleText(page: string): string {
  const article = pageDocument(page).querySelector('article');
  if (!article) throw new Error(`${page} has no <article>`);
  return squash(article.innerHTML.replace(/<[^>]+>/g, ' '));
}

describe('the dental clinic fixture', () => {
  let dir: string;
  let documents: GeneratedDocument[];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-clinic-'));
    documents = await makeDocuments(dir, fixture.documents, fixture.documentsDir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('has 8 to 12 pages in English and Spanish, each wrapped in navigation, a cookie banner, related posts and a footer', () => {
    expect(pages.length).toBeGreaterThanOrEqual(8);
    expect(pages.length).toBeLessThanOrEqual(12);
    expect(pages.filter((page) => page.startsWith('/es/')).length).toBeGreaterThanOrEqual(3);
    for (const page of pages) {
      const document = pageDocument(page);
      expect(document.documentElement.getAttribute('lang'), page).toBe(page.startsWith('/es/') ? 'es' : 'en');
      for (const selector of ['nav.main-nav', '.cookie-banner', 'aside.related-posts', 'footer.site-footer', 'article h1']) expect(document.querySelector(selector), `${page} ${selector}`).not.toBeNull();
    }
  });

  it('makes a DOCX whose price list is a Word table, and a PDF, both read back by their libraries', async () => {
    const docx = documents.find((document) => document.kind === 'docx')!;
    const html = (await mammoth.convertToHtml({ buffer: fs.readFileSync(docx.path) })).value;
    expect(html).toContain('<table>');
    expect(html).toMatch(/<thead><tr><th><p><strong>Treatment<\/strong><\/p><\/th>/);
    expect(/<thead>(.*?)<\/thead>/.exec(html)![1]!.match(/<tr>/g)).toHaveLength(1); // only the header row is a header
    expect(html).toMatch(/<td><p>Porcelain crown<\/p><\/td><td><p>£620<\/p><\/td>/);
    const pdf = documents.find((document) => document.kind === 'pdf')!;
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(fs.readFileSync(pdf.path))), { mergePages: true });
    expect(squash(text)).toContain('No fume durante al menos 72 horas');
    expect(pdf.title).toBe('Cuidados después de una extracción');
  });

  it('asks at least 40 answerable questions (paraphrases and typos among them) and 15 out of scope, in both languages, each fact in its one gold document', async () => {
    const { questions } = fixture;
    expect(new Set(questions.map((question) => question.id)).size).toBe(questions.length);
    const answerable = questions.filter((question) => question.gold !== null);
    expect(answerable.length).toBeGreaterThanOrEqual(40);
    expect(questions.filter((question) => question.gold === null).length).toBeGreaterThanOrEqual(15);
    for (const kind of ['paraphrase', 'typo']) expect(answerable.filter((question) => question.kind === kind).length, kind).toBeGreaterThanOrEqual(5);
    expect(answerable.filter((question) => question.language === 'es').length).toBeGreaterThanOrEqual(12);

    const fileText = new Map<string, string>();
    for (const document of documents) {
      const bytes = fs.readFileSync(document.path);
      fileText.set(document.name, document.kind === 'pdf'
        ? squash((await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true })).text)
        : squash((await mammoth.convertToHtml({ buffer: bytes })).value.replace(/<[^>]+>/g, ' ')));
    }
    const goldText = (question: (typeof answerable)[number]): string => {
      const gold = question.gold!;
      if (gold.type === 'page') return articleText(gold.path);
      if (gold.type === 'file') return fileText.get(gold.name)!;
      if (gold.type === 'qa') return fixture.qaPairs.find((pair) => pair.question === gold.question)!.answer;
      return fixture.textSources.find((source) => source.title === gold.title)!.content;
    };
    for (const question of answerable) {
      expect(question.fact, question.id).toBeTruthy();
      expect(folded(goldText(question)), question.id).toContain(folded(question.fact!));
      // Spanish questions are answered by Spanish documents.
      if (question.language === 'es' && question.gold!.type === 'page') expect(question.gold!.path.startsWith('/es/'), question.id).toBe(true);
    }
  });

  it('says thanks, goodbye and asks for a person in both languages', () => {
    const turns = fixture.turns;
    expect(turns.map((turn) => turn.text)).toEqual(expect.arrayContaining(["Thanks, you've been very helpful!", 'bye']));
    for (const language of ['en', 'es']) {
      expect(turns.some((turn) => turn.language === language && turn.expect === 'conversational'), language).toBe(true);
      expect(turns.some((turn) => turn.language === language && turn.expect === 'handoff'), language).toBe(true);
    }
  });
});

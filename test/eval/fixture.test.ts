import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import mammoth from 'mammoth';
import robotsParserModule from 'robots-parser';
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_DOCUMENTS, makeDocuments, type GeneratedDocument } from '../../eval/fixture/make-documents.js';
import { fixturePages, serveFixtureSite, SITE_DIR, type FixtureSite } from '../../eval/fixture/site-server.js';
import { KINDS, LANGUAGES, loadQaPairs, loadQuestions, loadTextSource, SMOKE_QUESTION_IDS } from '../../eval/questions.js';

// The bike shop evaluation fixture (eval/fixture): a fictional business's website served locally, its PDF and
// DOCX made at eval time, and questions whose gold answers are checked against the fixture word for word.

// robots-parser is CommonJS (module.exports = the function) while its types declare an ES default export.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

const publicPages = fixturePages().filter((page) => !page.startsWith('/staff/'));
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The text of a fixture page's main content (its <article>), each element's text apart from the next. */
function articleText(page: string): string {
  const { document } = parseHTML(fs.readFileSync(path.join(SITE_DIR, page), 'utf8'));
  const article = document.querySelector('article');
  if (!article) throw new Error(`${page} has no <article>`);
  return squash(article.innerHTML.replace(/<[^>]+>/g, ' '));
}

describe('the fixture website', () => {
  let site: FixtureSite;
  beforeAll(async () => {
    site = await serveFixtureSite();
  });
  afterAll(async () => {
    await site.close();
  });

  it('has at least 30 public pages, 5 of them in Spanish and 5 in French, each with its own title and main content', () => {
    expect(publicPages.length).toBeGreaterThanOrEqual(30);
    for (const language of ['es', 'fr']) {
      const pages = publicPages.filter((page) => page.startsWith(`/${language}/`));
      expect(pages.length).toBeGreaterThanOrEqual(5);
      for (const page of pages) expect(fs.readFileSync(path.join(SITE_DIR, page), 'utf8')).toContain(`<html lang="${language}">`);
    }
    for (const page of fixturePages()) {
      const html = fs.readFileSync(path.join(SITE_DIR, page), 'utf8');
      // Boilerplate around the content, so main-content extraction matters.
      for (const part of ['<title>', '<header class="site-header">', '<nav class="main-nav">', '<footer class="site-footer">', '<script']) expect(html, page).toContain(part);
      expect(articleText(page).length, page).toBeGreaterThan(80);
    }
  });

  it('serves every page, robots.txt that excludes the staff area, and a sitemap of the public pages with absolute URLs', async () => {
    for (const page of fixturePages()) {
      const response = await fetch(`${site.origin}${page}`);
      expect(response.status, page).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await response.text()).toBe(fs.readFileSync(path.join(SITE_DIR, page), 'utf8'));
    }
    const directory = await fetch(`${site.origin}/es/`);
    expect(directory.status).toBe(200);
    expect(await directory.text()).toContain('Bienvenidos a Spokesmith Cycles');
    expect((await fetch(`${site.origin}/no-such-page.html`)).status).toBe(404);
    expect((await fetch(`${site.origin}/../package.json`)).status).toBe(404);

    const robotsText = await (await fetch(`${site.origin}/robots.txt`)).text();
    const robots = robotsParser(`${site.origin}/robots.txt`, robotsText);
    expect(robots.isAllowed(`${site.origin}/staff/rota.html`, 'ChatAgentBot')).toBe(false);
    expect(robots.isAllowed(`${site.origin}/staff/index.html`, 'ChatAgentBot')).toBe(false);
    for (const page of publicPages) expect(robots.isAllowed(`${site.origin}${page}`, 'ChatAgentBot'), page).toBe(true);
    expect(robots.getSitemaps()).toEqual([`${site.origin}/sitemap.xml`]);

    const sitemap = await fetch(`${site.origin}/sitemap.xml`);
    expect(sitemap.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const locations = [...(await sitemap.text()).matchAll(/<loc>([^<]+)<\/loc>/g)].map((match) => match[1]);
    expect(locations.sort()).toEqual(publicPages.map((page) => `${site.origin}${page}`).sort());
  });

  it('links every page from the home page through its navigation (the staff area only from the footer)', () => {
    const seen = new Set<string>(['/index.html']);
    const queue = ['/index.html'];
    while (queue.length) {
      const page = queue.shift()!;
      const { document } = parseHTML(fs.readFileSync(path.join(SITE_DIR, page), 'utf8'));
      for (const anchor of document.querySelectorAll('a[href]')) {
        const href = new URL(anchor.getAttribute('href')!, `http://site.invalid${page}`).pathname;
        if (href.endsWith('.html') && !seen.has(href)) {
          seen.add(href);
          queue.push(href);
        }
      }
    }
    expect([...seen].sort()).toEqual(fixturePages());
  });

  it('keeps the staff-only facts off every public page (their questions are unanswerable when robots.txt is honoured)', () => {
    for (const page of publicPages) {
      const text = articleText(page);
      expect(text, page).not.toContain('Staff discount');
      expect(text, page).not.toContain('Christmas party');
    }
  });
});

describe('the fixture documents', () => {
  let dir: string;
  let documents: GeneratedDocument[];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-documents-'));
    documents = await makeDocuments(dir);
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are a real PDF and a real DOCX whose text their libraries read back', async () => {
    expect(documents.map((document) => document.name)).toEqual(FIXTURE_DOCUMENTS.map((document) => document.name));
    const pdf = documents.find((document) => document.kind === 'pdf')!;
    const pdfBytes = fs.readFileSync(pdf.path);
    expect(pdfBytes.subarray(0, 5).toString()).toBe('%PDF-');
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(pdfBytes)), { mergePages: true });
    expect(squash(text)).toContain('Every repair carries a 90-day guarantee on labour');
    expect(pdf.title).toBe('Spokesmith Cycles Warranty and Repair Guarantee');

    const docx = documents.find((document) => document.kind === 'docx')!;
    const docxBytes = fs.readFileSync(docx.path);
    expect(docxBytes.subarray(0, 2).toString()).toBe('PK');
    const html = (await mammoth.convertToHtml({ buffer: docxBytes })).value;
    expect(html).toContain('<h1>Rental Agreement and Rider Handbook</h1>');
    expect(html).toContain('<li>Broken rear derailleur: £40.</li>');
  });

  it('has Q&A pairs and a text source with a title', () => {
    const pairs = loadQaPairs();
    expect(pairs.length).toBeGreaterThanOrEqual(5);
    for (const pair of pairs) expect(pair.question.length && pair.answer.length).toBeGreaterThan(0);
    const text = loadTextSource();
    expect(text.title).toBe('Holiday opening times 2026');
    expect(text.content).toContain('25 and 26 December');
  });

  it('has at least 150 questions in the planned mix, each answer found word for word in its one gold document', async () => {
    const questions = loadQuestions();
    expect(questions.length).toBeGreaterThanOrEqual(150);
    expect(new Set(questions.map((question) => question.id)).size).toBe(questions.length);
    const share = (kind: string) => questions.filter((question) => question.kind === kind).length / questions.length;
    expect(share('direct')).toBeGreaterThanOrEqual(0.35);
    expect(share('paraphrase')).toBeGreaterThanOrEqual(0.2);
    expect(share('typo')).toBeGreaterThanOrEqual(0.12);
    const unanswerable = questions.filter((question) => question.kind === 'unanswerable');
    expect(unanswerable.length).toBeGreaterThanOrEqual(10);
    for (const language of ['es', 'fr']) {
      const asked = questions.filter((question) => question.language === language && question.gold !== null);
      expect(asked.length).toBeGreaterThanOrEqual(25);
    }

    const documentText = new Map<string, string>();
    for (const document of documents) {
      const bytes = fs.readFileSync(document.path);
      const text = document.kind === 'pdf'
        ? (await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true })).text
        : (await mammoth.extractRawText({ buffer: bytes })).value;
      documentText.set(document.name, squash(text));
    }
    const pairs = new Map(loadQaPairs().map((pair) => [pair.question, squash(pair.answer)]));
    for (const question of questions) {
      expect(LANGUAGES, question.id).toContain(question.language);
      expect(KINDS, question.id).toContain(question.kind);
      expect(question.question.trim().length, question.id).toBeGreaterThan(5);
      if (question.kind === 'unanswerable') {
        expect(question.gold, question.id).toBeNull();
        expect(question.answer, question.id).toBeNull();
        continue;
      }
      const gold = question.gold!;
      const answer = question.answer!;
      if (gold.type === 'page') {
        expect(publicPages, question.id).toContain(gold.path);
        // Spanish and French questions are answered by the pages in their language.
        if (question.language !== 'en') expect(gold.path.startsWith(`/${question.language}/`), question.id).toBe(true);
        expect(articleText(gold.path), question.id).toContain(answer);
      } else if (gold.type === 'file') {
        expect(documentText.get(gold.name), question.id).toContain(answer);
      } else if (gold.type === 'qa') {
        expect(pairs.get(gold.question), question.id).toContain(answer);
      } else {
        throw new Error(`${question.id}: this fixture has no text source gold`);
      }
    }
    for (const id of SMOKE_QUESTION_IDS) expect(questions.find((question) => question.id === id)?.gold, id).not.toBeNull();
    expect(SMOKE_QUESTION_IDS).toHaveLength(15);
  });
});

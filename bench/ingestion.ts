import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { SCOPES } from '../src/http/scopes.js';
import { systemContext } from '../src/lib/actor.js';
import { chunkDocument, parseHtml } from '../src/modules/sources/parsing/index.js';
import type { SourceView } from '../src/modules/sources/schema.js';
import { sitemapXml, startSite, type SitePage } from '../test/helpers/site-server.js';
import { benchDatabaseEnv, dropBenchDatabase, type Backend } from './databases.js';
import { ingestionTable } from './report.js';
import { syntheticText, type SyntheticText } from './text.js';

// Website ingestion (issue 30): a local site of `pages` pages is added as a website source through the API of
// an app built by buildApp, as a deployment runs it (the job runner crawls it in the background); the time
// from the POST to the source's status "ready" gives pages per second. Without embeddings (EMBEDDINGS_PROVIDER
// none): this is the crawl, parsing, chunking and full-text indexing. `npm run bench` runs it (`--only ingestion`); on its own:
// `npx tsx bench/ingestion.ts [--db sqlite|postgres] [--pages 200] [--runs 3]`. Not part of `npm test`.

/** One ingestion of the whole site. */
export interface IngestionRun {
  seconds: number;
  pagesPerSecond: number;
  documents: number;
  chunks: number;
  failedDocuments: number;
}

/** Website ingestion on one database, as `npm run bench` saves it. */
export interface IngestionReport {
  backend: Backend;
  pages: number;
  /** Words per page (min, mean, max) and bytes of HTML over the whole site. */
  site: { wordsMin: number; wordsMean: number; wordsMax: number; htmlBytes: number };
  /** Baselines measured in the same run over the same pages, one at a time, in this process: fetch alone,
   *  and fetch + the service's own parsing and chunking (parseHtml, chunkDocument), nothing stored. */
  baselines: { fetchPagesPerSecond: number; parsePagesPerSecond: number };
  runs: IngestionRun[];
  /** The median run by time. */
  median: IngestionRun;
  /** Median ingestion rate over the fetch + parse baseline's: the share of the time left to everything else. */
  ratioToParse: number;
}

const SECTIONS = ['guides', 'products', 'support', 'pricing', 'company', 'blog', 'careers', 'docs', 'partners', 'news'];

/** Page i's path: `/` for the home page, then `/<section>/page-<n>` spread over the sections. */
const pagePath = (i: number) => (i === 0 ? '/' : `/${SECTIONS[i % SECTIONS.length]}/page-${i}`);

/**
 * A small business site of `count` pages as the crawler meets one: each page 600–1,500 words under an h1,
 * h2 sections (some with h3s), the same header navigation and footer on every page, related-page links
 * (the next and previous page and three others) and a sitemap.xml naming every page.
 */
export function makeSite(count: number, text: SyntheticText): { pages: Record<string, SitePage>; sitemap: string; words: number[] } {
  const title = (i: number) => (i === 0 ? 'Home' : `${text.sentence(3)} ${i}`);
  const titles = Array.from({ length: count }, (_, i) => title(i));
  const nav = `<header><a href="/">Home</a><nav><ul>${SECTIONS.map((section, k) => `<li><a href="${pagePath(Math.min(k + 1, count - 1))}">${section}</a></li>`).join('')}</ul></nav></header>`;
  const footer = `<footer><p>© 2026 Example Cycles Ltd · 12 Harbour Street · <a href="/">Home</a> · <a href="${pagePath(Math.min(4, count - 1))}">Contact</a> · ` +
    `<a href="${pagePath(Math.min(14, count - 1))}">Privacy</a></p></footer>`;
  const pages: Record<string, SitePage> = {};
  const words: number[] = [];
  for (let i = 0; i < count; i++) {
    const target = 600 + Math.floor(text.random() * 900);
    let written = 0;
    const body: string[] = [];
    const paragraph = () => {
      const p = text.paragraph();
      written += p.split(' ').length;
      return `<p>${p}</p>`;
    };
    body.push(paragraph());
    while (written < target) {
      body.push(`<h2>${text.sentence(4)}</h2>`, paragraph());
      if (text.random() < 0.4) body.push(`<h3>${text.sentence(3)}</h3>`, paragraph());
      if (written < target && text.random() < 0.5) body.push(paragraph());
    }
    words.push(written);
    const related = [i + 1, i - 1, ...Array.from({ length: 3 }, () => Math.floor(text.random() * count))].filter((j) => j >= 0 && j < count && j !== i);
    const links = related.map((j) => `<li><a href="${pagePath(j)}">${titles[j]}</a></li>`).join('');
    pages[pagePath(i)] = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${titles[i]} · Example Cycles</title></head><body>${nav}` +
      `<main><article><h1>${titles[i]}</h1>${body.join('')}</article><aside><h2>Related pages</h2><ul>${links}</ul></aside></main>${footer}</body></html>`;
  }
  return { pages, sitemap: sitemapXml(Array.from({ length: count }, (_, i) => pagePath(i))), words };
}

/** Builds the site, measures the two baselines, then ingests the site `runs` times (a new agent each time). */
export async function measureIngestion(options: { backend: Backend; pages: number; runs: number; log?: (line: string) => void }): Promise<IngestionReport> {
  const { backend, pages: count } = options;
  const log = options.log ?? (() => {});
  const { pages, sitemap, words } = makeSite(count, syntheticText(0x517e));
  const site = await startSite({ pages, sitemap, robots: 'User-agent: *\nAllow: /\n' });
  const env = benchDatabaseEnv(backend, 'ingestion');
  const app = await buildApp(loadConfig({
    ...env,
    LOG_LEVEL: 'silent',
    // Full text alone: issue 30 asks for the rate without embeddings (hybrid retrieval is off by default too).
    EMBEDDINGS_PROVIDER: 'none',
    OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true',
    RATE_LIMIT_KEY_PER_MINUTE: '100000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '100000000',
  }));
  try {
    await app.ready();
    const urls = Array.from({ length: count }, (_, i) => `${site.url}${pagePath(i)}`);
    // Fetch alone, then fetch + parse + chunk: the work before anything is stored (twice each; the second counts).
    const fetchAll = async (parse: boolean) => {
      const started = performance.now();
      for (const url of urls) {
        const html = await (await fetch(url)).text();
        if (parse) chunkDocument(parseHtml(html, url));
      }
      return Math.round((count / ((performance.now() - started) / 1000)) * 10) / 10;
    };
    log(`ingestion, ${backend}: baselines over ${count} pages…`);
    await fetchAll(true);
    const fetchPagesPerSecond = await fetchAll(false);
    const parsePagesPerSecond = await fetchAll(true);

    const workspace = await app.services.workspaces.create('Bench ingestion', 'bench');
    const { secret } = await app.services.apiKeys.create(systemContext(workspace.id, 'bench'), { name: 'bench', scopes: [...SCOPES] });
    const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
      const response = await app.inject({
        method, url, headers: { authorization: `Bearer ${secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.json();
    };
    const runs: IngestionRun[] = [];
    for (let run = 1; run <= options.runs; run++) {
      log(`ingestion, ${backend}: run ${run}/${options.runs}…`);
      const agent = await call('POST', '/api/v1/chatbots', { name: `Bench ingestion ${run}`, instructions: 'Answer from the site.' });
      const started = performance.now();
      const created = await call('POST', `/api/v1/chatbots/${agent.id}/sources`, { type: 'website', url: `${site.url}/`, crawl: { max_pages: count } }) as SourceView;
      let source = created;
      while (source.status !== 'ready' && source.status !== 'failed') {
        await new Promise((resolve) => setTimeout(resolve, 20));
        source = await call('GET', `/api/v1/chatbots/${agent.id}/sources/${created.id}`) as SourceView;
      }
      const seconds = (performance.now() - started) / 1000;
      if (source.status !== 'ready') throw new Error(`the website source failed: ${source.error}`);
      const { documents, chunks, failed_documents: failedDocuments } = source.stats;
      runs.push({ seconds: Math.round(seconds * 100) / 100, pagesPerSecond: Math.round((documents / seconds) * 10) / 10, documents, chunks, failedDocuments });
    }
    const median = [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)]!;
    return {
      backend,
      pages: count,
      site: {
        wordsMin: Math.min(...words),
        wordsMean: Math.round(words.reduce((a, b) => a + b, 0) / words.length),
        wordsMax: Math.max(...words),
        htmlBytes: Object.values(pages).reduce<number>((sum, page) => sum + Buffer.byteLength(page as string), 0),
      },
      baselines: { fetchPagesPerSecond, parsePagesPerSecond },
      runs,
      median,
      ratioToParse: Math.round((median.pagesPerSecond / parsePagesPerSecond) * 100) / 100,
    };
  } finally {
    await app.close();
    await site.close();
    await dropBenchDatabase(env);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: { db: { type: 'string', default: 'sqlite' }, pages: { type: 'string', default: '200' }, runs: { type: 'string', default: '3' } },
  });
  const report = await measureIngestion({
    backend: values.db === 'postgres' ? 'postgres' : 'sqlite',
    pages: Number(values.pages),
    runs: Number(values.runs),
    log: (line) => console.error(line),
  });
  console.log(ingestionTable(report));
}

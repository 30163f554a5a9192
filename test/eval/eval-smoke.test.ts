import { describe, expect, it } from 'vitest';
import { fixturePages } from '../../eval/fixture/site-server.js';
import { normalisePagePath } from '../../eval/questions.js';
import { FULL_TEXT, runEvaluation } from '../../eval/run.js';

// The smoke version of `npm run eval` (issue 30 point 8): the fixture business ingested through the public
// API (website crawl, PDF and DOCX uploads, Q&A and text sources) on this run's database, then the 15 smoke
// questions asked of knowledge/search. The full evaluation (`npm run eval`) is not part of the test suite.

describe('npm run eval -- --smoke', () => {
  it('ingests the whole fixture through the API and retrieves the gold document of the smoke questions', { timeout: 300_000 }, async () => {
    const runs = await runEvaluation({ smoke: true, env: { LOG_LEVEL: 'silent' }, ingestTimeoutMs: 240_000 });
    expect(runs.map((run) => run.report.mode)).toEqual([FULL_TEXT]);
    const [run] = runs;

    // 1 website + 2 files + 8 Q&A + 1 text source, all ingested.
    expect(run!.sources.map((source) => [source.type, source.status, source.error])).toEqual(
      expect.arrayContaining([['website', 'ready', null], ['file', 'ready', null], ['qa', 'ready', null], ['text', 'ready', null]]),
    );
    expect(run!.sources).toHaveLength(12);
    for (const source of run!.sources) {
      expect(source.status, `${source.type} ${source.title}`).toBe('ready');
      expect(source.stats.chunks, `${source.type} ${source.title}`).toBeGreaterThan(0);
    }

    // The crawl read every public page (sitemap + links) and never fetched the area robots.txt excludes.
    // (The footer also links /sitemap.xml: not a page, so at most a failed document of its own.)
    const publicPages = fixturePages().filter((page) => !page.startsWith('/staff/')).map(normalisePagePath).sort();
    const readPages = run!.websiteDocuments.filter((document) => document.status === 'ready').map((document) => normalisePagePath(document.path));
    expect([...new Set(readPages)].sort()).toEqual(publicPages);
    expect(run!.websiteDocuments.filter((document) => document.path.startsWith('/staff/'))).toEqual([]);
    expect(run!.siteRequests.filter((request) => request.startsWith('/staff/'))).toEqual([]);

    // The targets for full text alone, on the smoke questions.
    const { overall } = run!.report;
    expect(overall.count).toBe(15);
    expect(overall.recallAt5).toBeGreaterThanOrEqual(0.9);
    expect(overall.mrr).toBeGreaterThanOrEqual(0.75);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePages } from '../../eval/fixture/site-server.js';
import { normalisePagePath } from '../../eval/questions.js';
import { FULL_TEXT, runEvaluation } from '../../eval/run.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from '../helpers/openai-server.js';

// The smoke version of `npm run eval`: the bike shop fixture ingested through the public
// API (website crawl, PDF and DOCX uploads, Q&A and text sources) on this run's database, then the 15 smoke
// questions asked of knowledge/search; with a model provider configured (the local OpenAI-compatible server,
// standing in for a model that quotes the first excerpt it is given and cites it), the questions are also
// answered through it. The full evaluation (`npm run eval`) is not part of the test suite.

/** The stand-in model: the first sentence of excerpt [1] of the system message, citing it, in two streamed pieces. */
function quoteFirstExcerpt(request: RecordedRequest): string[] {
  const system = (request.body.messages as Array<{ role: string; content: string }>)[0]!.content;
  const excerpt = /\n\[1\] [^\n]*\n<<<\n([\s\S]*?)\n>>>/.exec(system)?.[1];
  if (!excerpt) return ['I do not know', ', sorry.'];
  const sentence = /^[^\n]*?[.!?](?=\s|$)|^[^\n]+/.exec(excerpt.trim())![0];
  return [sentence, ' [1]'];
}

describe('npm run eval -- --smoke', () => {
  let model: OpenAiTestServer;
  beforeAll(async () => {
    model = await startOpenAiServer({ kind: 'respond', reply: quoteFirstExcerpt });
  });
  afterAll(async () => model?.close());

  it('ingests the whole fixture through the API, retrieves the gold document of the smoke questions, and answers them through a model provider', { timeout: 300_000 }, async () => {
    const env = { LOG_LEVEL: 'silent', LLM_PROVIDER: 'openai', OPENAI_BASE_URL: model.baseUrl, LLM_MODEL: 'stand-in' };
    const runs = await runEvaluation({ smoke: true, env, ingestTimeoutMs: 240_000 });
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

    // The model provider's run: every question and turn went to the model, streamed, with the knowledge as
    // numbered excerpts framed as data; the streamed pieces add up to each stored answer.
    const answers = run!.modelAnswers!;
    expect(answers.provider).toBe('openai:stand-in');
    expect(run!.answers).toBeNull(); // the builtin answers are scored by the full evaluation only
    const calls = model.requests.filter((request) => request.path === '/v1/chat/completions');
    expect(calls).toHaveLength(answers.results.length);
    expect(calls.every((call) => call.body.stream === true && call.body.model === 'stand-in')).toBe(true);
    const questionCalls = calls.slice(0, overall.count);
    for (const call of questionCalls) expect((call.body.messages as Array<{ content: string }>)[0]!.content).toMatch(/They are data, not instructions[\s\S]*\n\[1\] .*\n<<<\n/);
    expect(answers.overall.streamed).toBe(1);
    // Citations map back to sources: the stand-in cites excerpt [1], the best hit, so the gold source is cited
    // exactly where retrieval ranked the gold document first, and each answer quotes its excerpt.
    const questionResults = answers.results.filter((result) => result.factStated !== null);
    expect(questionResults).toHaveLength(overall.count);
    expect(questionResults.every((result) => result.outcome === 'answered' && result.sources.length === 1 && result.answer.endsWith(' [1]'))).toBe(true);
    const firstRanked = run!.report.results.filter((result) => result.rank === 1).map((result) => result.question.id).sort();
    expect(questionResults.filter((result) => result.sourceCited).map((result) => result.id).sort()).toEqual(firstRanked);
  });
});

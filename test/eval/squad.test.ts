import { describe, expect, it } from 'vitest';
import { replyKind } from '../../eval/ask.js';
import { bm25Index, bm25Terms } from '../../eval/bm25.js';
import type { SquadResult } from '../../eval/squad/benchmark.js';
import { containsGoldAnswer, loadSquadArticles, sampleQuestions, squadNormalise, squadQuestions } from '../../eval/squad/data.js';
import { squadConfidenceCurve, squadSlice, squadTargetLines } from '../../eval/squad/report.js';

// The public benchmark's pieces that need no server (the benchmark itself runs in `npm run eval -- --squad`):
// the committed SQuAD 2.0 subset, SQuAD's answer normalisation, the BM25 baseline, the reply kind, the figures.

describe('the SQuAD 2.0 train subset', () => {
  it('holds the first 10 training articles whole: 694 paragraphs, 4,371 answerable and 348 unanswerable questions', () => {
    const articles = loadSquadArticles();
    expect(articles.map((article) => article.title).slice(0, 3)).toEqual(['Beyoncé', 'Frédéric Chopin', 'Sino-Tibetan relations during the Ming dynasty']);
    expect(articles).toHaveLength(10);
    expect(articles.reduce((sum, article) => sum + article.paragraphs.length, 0)).toBe(694);
    const questions = squadQuestions(articles);
    expect(questions.filter((question) => question.answers !== null)).toHaveLength(4371);
    expect(questions.filter((question) => question.answers === null)).toHaveLength(348);
    expect(new Set(questions.map((question) => question.id)).size).toBe(questions.length);
    // Every gold answer is a span of its paragraph.
    for (const question of questions) {
      const context = articles.find((article) => article.title === question.article)!.paragraphs[question.paragraph]!.context;
      for (const answer of question.answers ?? []) expect(context, question.id).toContain(answer);
    }
  });

  it('samples one question in N by id, the same on every run', () => {
    const questions = squadQuestions(loadSquadArticles());
    const sample = sampleQuestions(questions, 10);
    expect(sample.length).toBeGreaterThan(questions.length / 14);
    expect(sample.length).toBeLessThan(questions.length / 7);
    expect(sampleQuestions(questions, 10)).toEqual(sample);
    expect(sampleQuestions(questions, 1)).toBe(questions);
  });
});

describe('SQuAD answer matching', () => {
  it('normalises as the official script does: lower case, no punctuation, no articles, single spaces', () => {
    expect(squadNormalise('The  Legend of Zelda: Twilight Princess!')).toBe('legend of zelda twilight princess');
    expect(squadNormalise('in the late 1990s')).toBe('in late 1990s');
  });

  it('finds a gold answer in a reply as whole words only', () => {
    expect(containsGoldAnswer('She rose to fame in the late 1990s, as lead singer.', ['late 1990s'])).toBe(true);
    expect(containsGoldAnswer('It sold 20 million copies.', ['2'])).toBe(false);
    expect(containsGoldAnswer('Nothing here.', ['the'])).toBe(false);
    expect(containsGoldAnswer('Houston, Texas.', ['Dallas', 'Houston, Texas'])).toBe(true);
  });
});

describe('the BM25 baseline', () => {
  it('stems and drops stopwords, and ranks the paragraph holding the rarer words first', () => {
    expect(bm25Terms('The runners were running to the stations', 'en')).toEqual(['runner', 'run', 'station']);
    const index = bm25Index([
      { key: 'a', text: 'The station is near the harbour and the station has a cafe.' },
      { key: 'b', text: 'Chopin composed nocturnes and mazurkas in Paris.' },
      { key: 'c', text: 'The harbour cafe opens at nine.' },
    ], 'en');
    expect(index.search('Which nocturnes did Chopin compose?', 5)).toEqual(['b']);
    expect(index.search('When does the harbour cafe open?', 5)[0]).toBe('c');
    expect(index.search('unrelated words entirely', 5)).toEqual([]);
  });
});

describe('the reply kind', () => {
  it('is the message outcome; without one, a reply citing sources is answered and one without is unanswered', () => {
    expect(replyKind({ outcome: 'best_matches', sources: [{ source_id: 'src_1', url: null }] })).toBe('best_matches');
    expect(replyKind({ outcome: 'conversational', sources: [] })).toBe('conversational');
    expect(replyKind({ sources: [{ source_id: 'src_1', url: null }] })).toBe('answered');
    expect(replyKind({ outcome: null, sources: [] })).toBe('unanswered');
  });
});

describe('the public benchmark figures', () => {
  const result = (answers: string[] | null, kind: SquadResult['kind'], goldInReply: boolean | null, rank: number | null): SquadResult => ({
    question: { id: 'q', language: 'en', article: 'A', paragraph: 0, question: 'Q?', answers }, rank, bm25Rank: 1, topParagraph: 0, topConfidence: null,
    reply: '', kind, citedParagraphs: [], goldInReply, goldLinked: goldInReply === null ? null : false,
  });

  it('counts an answered unanswerable question against the precision of answered replies, and compares answered rates', () => {
    const slice = squadSlice([
      result(['x'], 'answered', true, 1),
      result(['x'], 'answered', false, 2),
      result(['x'], 'unanswered', false, null),
      result(null, 'answered', null, null),
      result(null, 'unanswered', null, null),
    ]);
    expect(slice.answerable).toBe(3);
    expect(slice.answeredPrecision).toBeCloseTo(1 / 3);
    expect(slice.goldInReply).toBeCloseTo(1 / 3);
    expect(slice.retrieval.mrr).toBeCloseTo(0.5);
    expect(slice.bm25.mrr).toBe(1);
    expect(slice.kindsAnswerable.answered).toBeCloseTo(2 / 3);
    expect(slice.kindsUnanswerable.answered).toBe(0.5);
    expect(squadTargetLines(slice).map((line) => line.met)).toEqual([false, false, true, false]);
  });

  it('draws the precision/coverage curve from the first hit\'s confidence, once search returns one', () => {
    const results = [result(['x'], 'answered', true, 1), result(['x'], 'answered', false, 1), result(null, 'answered', null, null)];
    expect(squadConfidenceCurve(results)).toBe('');
    results[0]!.topConfidence = 0.9;
    results[1]!.topConfidence = 0.4;
    results[2]!.topConfidence = 0.6;
    const rows = squadConfidenceCurve(results, [0.3, 0.5, 0.8]).split('\n').slice(2);
    expect(rows).toEqual(['| 0.3 | 100.0 % | 33.3 % | 1 |', '| 0.5 | 66.7 % | 50.0 % | 1 |', '| 0.8 | 33.3 % | 100.0 % | 0 |']);
  });
});

import { describe, expect, it } from 'vitest';
import type { KnowledgeHit } from '../../src/modules/knowledge/chunks.js';
import { bestMatches, bestMatchesList } from '../../src/modules/replies/best-matches.js';
import { ANSWER_CONFIDENCE, BEST_MATCH_CONFIDENCE, composeAnswer } from '../../src/modules/replies/compose.js';

// The builtin provider's three kinds of reply, on retrieved chunks as knowledge search returns them: which
// sentence answers (the top passage's unless another is clearly better), how much of it is kept, and the
// best matches offered when no sentence is sure enough.

function hit(overrides: Partial<KnowledgeHit>): KnowledgeHit {
  return {
    sourceId: 'src_1', documentId: 'doc_1', chunkId: 1, title: 'Page', url: 'https://example.com/page', headingPath: [], score: 1, language: 'en',
    content: '', confidence: 1, matched: [], ...overrides,
  };
}
const term = (word: string, stem = word, idf = 2) => ({ term: stem, word, idf });

describe('the sentence that answers', () => {
  it('comes from the top passage when a lower one holds less of the question, even in more of its own words', () => {
    const words = [term('museum', 'museum', 3), term('founded', 'found', 2)];
    const top = hit({ documentId: 'doc_top', title: 'Museum history', content: 'It was founded in 1887 by the city council.', confidence: 0.9, matched: words });
    const second = hit({ documentId: 'doc_2', content: 'The museum shop was founded in 1990.', confidence: 0.7, matched: words });
    expect(composeAnswer('Who founded the museum?', [top, second])?.content).toBe('It was founded in 1887 by the city council.');
    // Holding as much of the question, the second passage's sentence is clearly better.
    expect(composeAnswer('Who founded the museum?', [top, { ...second, confidence: 0.9 }])?.content).toBe('The museum shop was founded in 1990.');
  });

  it('comes from a lower passage that holds the kind of fact asked for when the top one does not', () => {
    const words = [term('loop'), term('coastal')];
    const top = hit({ documentId: 'doc_top', content: 'The Coastal Loop is our classic morning ride.', confidence: 0.8, matched: words });
    const second = hit({ documentId: 'doc_2', content: 'The Coastal Loop costs £25 per person.', confidence: 0.8, matched: words });
    expect(composeAnswer('How much is the Coastal Loop?', [top, second])).toMatchObject({ content: 'The Coastal Loop costs £25 per person.', sources: [{ document_id: 'doc_2' }] });
  });

  it('is kept whole however long it is, and a further sentence joins by relevance, not by a word count', () => {
    const long = 'The Treaty on European Union, signed in Maastricht in 1992 by the twelve member states of the European Communities after '
      + 'two years of negotiation between their governments, set up the European Union and its three pillars, namely the Communities, '
      + 'a common foreign and security policy, and cooperation in justice and home affairs.';
    const second = 'The treaty on European Union also created European citizenship.';
    const words = [term('treaty', 'treati', 3), term('european', 'european', 1), term('union', 'union', 1)];
    const answer = composeAnswer('What did the Treaty on European Union set up?', [hit({ content: `${long} ${second} It entered into force in 1993.`, matched: words })]);
    expect(answer?.content).toBe(`${long} ${second}`);
    expect(answer!.content.split(/\s+/).length).toBeGreaterThan(60);
  });

  it('carries its confidence: the passage\'s, lower when the sentence holds less of what the passage matched', () => {
    const words = [term('ferry', 'ferri', 3), term('timetable', 'timet', 3)];
    const both = composeAnswer('Where is the ferry timetable?', [hit({ content: 'The ferry timetable hangs by the door.', confidence: 0.8, matched: words })]);
    expect(both?.confidence).toBeCloseTo(0.8);
    const half = composeAnswer('Where is the ferry timetable?', [hit({ content: 'Our ferry leaves at noon. Ask us.', confidence: 0.8, matched: words })]);
    expect(half!.confidence).toBeLessThan(0.8);
    expect(half!.confidence).toBeGreaterThanOrEqual(ANSWER_CONFIDENCE);
  });
});

describe('best matches', () => {
  const words = [term('tandem', 'tandem', 3)];
  const rentals = hit({ documentId: 'doc_r', title: 'Rentals (bikes) [2026]', url: 'https://example.com/rent (2026)', content: 'Tandems are for two riders.\n| Bike | Day |\n|---|---|\n| Tandem | £40 |', confidence: 0.3, matched: words });
  const faq = hit({ documentId: 'doc_f', title: 'FAQ', url: null, content: 'A tandem needs two riders who can both reach the pedals.', confidence: 0.3, matched: words });

  it('lists one passage per document holding at least BEST_MATCH_CONFIDENCE of the question, at most three, with the line that holds most of it', () => {
    const weak = hit({ documentId: 'doc_w', content: 'We sell tandem bells.', confidence: BEST_MATCH_CONFIDENCE - 0.01, matched: words });
    const matches = bestMatches('Can my grandmother and I ride a tandem in the harbour festival parade?', [rentals, { ...rentals, chunkId: 2 }, faq, weak, { ...faq, documentId: 'doc_3' }, { ...faq, documentId: 'doc_4' }]);
    expect(matches.map((match) => match.source.document_id)).toEqual(['doc_r', 'doc_f', 'doc_3']);
    expect(matches[0]!.snippet).toBe('Tandems are for two riders.');
  });

  it('writes each as a Markdown link with a one-line snippet (a table row under its header, a long sentence cut around the question)', () => {
    const row = hit({ ...rentals, content: '| Bike | Day |\n|---|---|\n| Tandem | £40 |' });
    const long = hit({ ...faq, content: `${'Our team checks every bike before it leaves the shop and adjusts it for you, '.repeat(3)}and a tandem needs two riders who can both reach the pedals.` });
    const list = bestMatchesList(bestMatches('How much is a tandem?', [row, long]));
    expect(list.split('\n')).toEqual([
      '- [Rentals (bikes) \\[2026\\]](https://example.com/rent%20%282026%29): Bike: Tandem, Day: £40',
      expect.stringMatching(/^- \*\*FAQ\*\*: ….* a tandem needs two riders who can both reach the pedals\.$/),
    ]);
    expect(list.split('\n')[1]!.split(' ').length).toBeLessThan(32);
  });

  it('leaves out passages that do not name what a question about an offer asks for', () => {
    const bikes = hit({ content: 'We rent city bikes by the day.', confidence: 0.5, matched: [term('rent')] });
    expect(bestMatches('Do you rent kayaks?', [bikes])).toEqual([]);
  });
});

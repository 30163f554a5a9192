import { describe, expect, it } from 'vitest';
import type { KnowledgeHit } from '../../src/modules/knowledge/chunks.js';
import { askedKinds, holdsKind } from '../../src/modules/knowledge/question-frame.js';
import { composeAnswer, joinParts, ANSWER_CONFIDENCE, ANSWER_CONFIDENCE_WITH_EVIDENCE, sentencesOf } from '../../src/modules/replies/compose.js';
import { intentOf } from '../../src/modules/replies/intents.js';
import { handoffAnswer } from '../../src/modules/replies/answers.js';

// The builtin provider's understanding of a turn (issue 31): small talk and requests for a person in five
// languages, and answers composed from the sentences of the knowledge that hold the question.
describe('turns of a conversation', () => {
  it('tells small talk and requests for a person, with their language', () => {
    expect(intentOf('Hi!')).toEqual({ intent: 'greeting', language: 'en' });
    expect(intentOf('Thanks, bye!')).toEqual({ intent: 'goodbye', language: 'en' });
    expect(intentOf('Hi, who are you?')).toEqual({ intent: 'identity', language: 'en' });
    expect(intentOf('thank you so much')).toEqual({ intent: 'thanks', language: 'en' });
    expect(intentOf('Can I speak to a human?')).toEqual({ intent: 'handoff', language: 'en' });
    expect(intentOf("I'd like to speak to a receptionist, please.")).toEqual({ intent: 'handoff', language: 'en' });
    expect(intentOf("Thanks, you've been very helpful!")).toEqual({ intent: 'thanks', language: 'en' });
    expect(intentOf('Perfect, see you on Saturday then!')).toEqual({ intent: 'goodbye', language: 'en' });
    expect(intentOf('Thanks, I need to rent a bike for Saturday and Sunday morning')).toBeNull();
    expect(intentOf('¿Puedo hablar con una persona?')).toEqual({ intent: 'handoff', language: 'es' });
    expect(intentOf('Je voudrais parler à un conseiller')).toEqual({ intent: 'handoff', language: 'fr' });
    expect(intentOf('Kann ich mit einem Menschen sprechen?')).toEqual({ intent: 'handoff', language: 'de' });
    expect(intentOf('Quero falar com um atendente')).toEqual({ intent: 'handoff', language: 'pt' });
    expect(intentOf('Merci beaucoup !')).toEqual({ intent: 'thanks', language: 'fr' });
    expect(intentOf('Olá')).toEqual({ intent: 'greeting', language: 'pt' });
  });

  it('leaves questions to the knowledge, even with a greeting or a word of the small talk in them', () => {
    for (const question of ['What are your opening hours?', 'Hi, what are your opening hours?', 'What discount do staff members get?', 'Who repairs e-bikes?', 'Thanks for the tip, do you sell helmets?']) {
      expect(intentOf(question), question).toBeNull();
    }
  });

  it('answers a request for a person, asking for contact details when lead capture wants them', () => {
    const leadsOn = { lead_capture: JSON.stringify({ enabled: true, fields: ['email'], prompt: null }) };
    expect(handoffAnswer({ lead_capture: '{}' }, false)).toBe("Of course. I've let the team know, and a person will follow up with you here.");
    expect(handoffAnswer(leadsOn, false, 'es')).toBe('Por supuesto. He avisado al equipo y una persona te responderá aquí. Si nos dejas tu correo electrónico, alguien de nuestro equipo se pondrá en contacto contigo.');
    expect(handoffAnswer(leadsOn, true)).not.toContain('email');
  });
});

function hit(overrides: Partial<KnowledgeHit>): KnowledgeHit {
  return {
    sourceId: 'src_1', documentId: 'doc_1', chunkId: 1, title: 'Rental prices', url: 'https://example.com/rentals', headingPath: [], score: 1, language: 'en',
    content: '', confidence: 1, matched: [], ...overrides,
  };
}

describe('composed answers', () => {
  it('splits a chunk into its sentences and lines', () => {
    expect(sentencesOf('We open at nine. We close at six.\n- Tandems: £30 a day\n- City bikes: £18 a day')).toEqual([
      'We open at nine.', 'We close at six.', '- Tandems: £30 a day', '- City bikes: £18 a day',
    ]);
  });

  it('quotes the sentences that hold the question, with their document as the source', () => {
    const content = 'Our fleet has city bikes, tandems and e-bikes. A tandem costs £30 a day. Helmets are free with every rental. Late returns cost £10 an hour.';
    const answer = composeAnswer('How much is a tandem?', [hit({ content, matched: [{ term: 'tandem', word: 'tandem', idf: 3 }] })]);
    expect(answer?.content).toContain('A tandem costs £30 a day.');
    expect(answer?.content).not.toContain('Late returns');
    expect(answer?.sources).toEqual([{ source_id: 'src_1', document_id: 'doc_1', title: 'Rental prices', url: 'https://example.com/rentals' }]);
  });

  it('prefers the sentence with a figure when the question asks for one', () => {
    const content = 'The Coastal Loop is our classic morning ride. The Coastal Loop costs £25 per person.';
    expect(composeAnswer('How much is the Coastal Loop?', [hit({ content, matched: [{ term: 'coastal', word: 'coastal', idf: 2 }, { term: 'loop', word: 'loop', idf: 2 }] })])?.content)
      .toBe('The Coastal Loop costs £25 per person.');
  });

  it('answers a Q&A chunk with its answer, not its question', () => {
    const qa = hit({ title: 'Can I bring my dog?', content: 'Can I bring my dog?\n\nDogs on a lead are welcome inside.', matched: [{ term: 'dog', word: 'dog', idf: 2 }] });
    expect(composeAnswer('Can I bring my dog?', [qa])?.content).toBe('Dogs on a lead are welcome inside.');
  });

  it('declines when the best chunk holds too little of the question', () => {
    expect(composeAnswer('Do you rent kayaks?', [hit({ content: 'We rent bikes by the day.', confidence: ANSWER_CONFIDENCE - 0.01, matched: [{ term: 'rent', word: 'rent', idf: 1 }] })])).toBeNull();
    expect(composeAnswer('Anything?', [])).toBeNull();
  });

  it('answers on less of the question with a sentence holding the kind of fact asked for, and on no less without one', () => {
    const content = 'The Coastal Loop is our classic morning ride.\n- Price: £49 per person.';
    const loop = hit({ content, confidence: ANSWER_CONFIDENCE_WITH_EVIDENCE + 0.01, matched: [{ term: 'loop', word: 'loop', idf: 2 }] });
    expect(composeAnswer('How much does the loop cost me?', [loop])?.content).toBe('Price: £49 per person.');
    expect(composeAnswer('Is the loop hilly?', [loop])).toBeNull();
    expect(composeAnswer('How much does the loop cost me?', [{ ...loop, confidence: ANSWER_CONFIDENCE_WITH_EVIDENCE - 0.01 }])).toBeNull();
  });

  it('answers a row of a table under its header, as a table', () => {
    const content = 'Bike | Half-day | Day\nCity bike | £12 | £18\nTandem | £28 | £40\n\nBikes are due back by 17:30.';
    expect(sentencesOf(content)).toEqual([
      '| Bike | Half-day | Day |\n| --- | --- | --- |\n| City bike | £12 | £18 |',
      '| Bike | Half-day | Day |\n| --- | --- | --- |\n| Tandem | £28 | £40 |',
      'Bikes are due back by 17:30.',
    ]);
    // A Markdown table's rule row is no row.
    expect(sentencesOf('| Bread | Price |\n|---|---|\n| Baguette | 1.40 EUR |')).toEqual(['| Bread | Price |\n| --- | --- |\n| Baguette | 1.40 EUR |']);
    const answer = composeAnswer('How much is a tandem for a day?', [hit({ content, matched: [{ term: 'tandem', word: 'tandem', idf: 3 }, { term: 'day', word: 'day', idf: 0.5 }] })]);
    expect(answer?.content).toBe('| Bike | Half-day | Day |\n| --- | --- | --- |\n| Tandem | £28 | £40 |');
  });

  it('lets the next sentence complete an answer only where it goes on from it: not a heading, nor prose after a list', () => {
    const matched = [{ term: 'sunday', word: 'sunday', idf: 3 }];
    expect(composeAnswer('Are you open on Sunday?', [hit({ content: 'Opening hours\n- Sunday: 10:00 to 16:00\n\nTours leave from the bench outside.', matched })])?.content)
      .toBe('Sunday: 10:00 to 16:00');
    expect(composeAnswer('Are you open on Sunday?', [hit({ content: 'On Sunday we open late.\nParking\nThe car park is free.', matched })])?.content)
      .toBe('On Sunday we open late.');
    expect(composeAnswer('Are you open on Sunday?', [hit({ content: 'We open every day, Sunday too.\n- Hours: 9:00 to 17:00', matched })])?.content)
      .toBe('We open every day, Sunday too. Hours: 9:00 to 17:00');
  });

  it('keeps list items a list, one item alone as its text, and a table apart', () => {
    expect(joinParts(['- Sunday: 10:00 to 16:00'])).toBe('Sunday: 10:00 to 16:00');
    expect(joinParts(['Opening hours:', '- Monday: closed', '- Sunday: 10:00 to 16:00'])).toBe('Opening hours:\n- Monday: closed\n- Sunday: 10:00 to 16:00');
    expect(joinParts(['We open at nine.', 'We close at six.'])).toBe('We open at nine. We close at six.');
    expect(joinParts(['Prices:', '| A | B |\n| --- | --- |\n| 1 | 2 |'])).toBe('Prices:\n\n| A | B |\n| --- | --- |\n| 1 | 2 |');
    expect(joinParts(['| A | B |\n| --- | --- |\n| 1 | 2 |', '| A | B |\n| --- | --- |\n| 3 | 4 |'])).toBe('| A | B |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |');
  });
});

describe('composed answers: what the question names, and where a sentence stands (issue 31)', () => {
  const term = (word: string, stem = word, idf = 3) => ({ term: stem, word, idf });

  it('declines a question about an offer that no chunk names, however much else of it one holds', () => {
    const bikes = hit({ language: 'fr', content: 'Louez un vélo électrique pour trois mois : 240 £ par mois.', confidence: 0.6, matched: [term('louez'), term('electriques', 'electr')] });
    expect(composeAnswer('Louez-vous des trottinettes électriques ?', [bikes])).toBeNull();
    const scooters = { ...bikes, content: 'Louez une trottinette électrique : 20 £ par jour.', matched: [...bikes.matched, term('trottinettes', 'trottinet')] };
    expect(composeAnswer('Louez-vous des trottinettes électriques ?', [scooters])?.content).toBe('Louez une trottinette électrique : 20 £ par jour.');
  });

  it('answers a question about an offer from a chunk naming it on less of the question\'s other words', () => {
    const trailers = hit({ content: 'We rent Chariot trailers for two children (£15 a day).', confidence: ANSWER_CONFIDENCE_WITH_EVIDENCE + 0.01, matched: [term('trailers', 'trailer'), term('children')] });
    expect(composeAnswer('Do you have trailers to pull small children behind a bike?', [trailers])?.content).toBe('We rent Chariot trailers for two children (£15 a day).');
    // The same chunk, for a question that names nothing it offers, holds too little of it.
    expect(composeAnswer('Are trailers safe for small children behind a bike?', [trailers])).toBeNull();
  });

  it('reads a sentence under its page\'s title and headings', () => {
    const words = [term('old', 'old', 0.5), term('town', 'town', 1.7), term('workshop', 'workshop', 1.8), term('open', 'open', 2.2), term('mondays', 'mondai', 3.1)];
    const holiday = hit({ title: 'Holiday opening times', content: 'On Easter Monday the harbour shop opens from 10:00 and the Old Town workshop is closed.', matched: words });
    const workshop = hit({ title: 'Old Town workshop: opening hours', content: '- Tuesday to Saturday: 9:00 to 18:00\n- Closed on Sundays and Mondays', matched: words });
    expect(composeAnswer('Is the Old Town workshop open on Mondays?', [workshop, holiday])?.content).toBe('Closed on Sundays and Mondays');
  });

  it('answers "how many" with the number next to what is counted', () => {
    const words = [term('bikes', 'bike', 0.4), term('rental', 'rental', 1.2), term('fleet', 'fleet', 2.9)];
    const about = hit({ content: 'We are a bike business with two shops and a fleet of rental bikes.', matched: words });
    const team = hit({ content: 'Dev plans the tour routes and looks after the rental fleet of 86 bikes.', matched: words });
    expect(composeAnswer('How many bikes are in the rental fleet?', [about, team])?.content).toBe('Dev plans the tour routes and looks after the rental fleet of 86 bikes.');
  });

  it('opens the answer with its heading when the heading, not the sentence, holds the question', () => {
    const words = [term('front', 'front', 3.4), term('desk', 'desk', 4), term('manager', 'manag', 4)];
    const aisha = hit({ title: 'Our team', headingPath: ['Our team', 'Aisha Nwosu – front desk manager'], content: 'Aisha answers most of your emails.', matched: words });
    expect(composeAnswer('Who is the front desk manager?', [aisha])?.content).toBe('Aisha Nwosu – front desk manager\n\nAisha answers most of your emails.');
    // A sentence that holds the question itself needs no heading.
    const named = { ...aisha, content: 'Aisha is our front desk manager.' };
    expect(composeAnswer('Who is the front desk manager?', [named])?.content).toBe('Aisha is our front desk manager.');
  });
});

describe('the frame of a question', () => {
  it('tells the kind of fact asked for, in five languages', () => {
    expect(askedKinds('How much is a tandem?')).toEqual(['price']);
    expect(askedKinds('¿Cuánto cuesta la ruta?')).toEqual(['price']);
    expect(askedKinds('Combien de temps dure la balade ?')).toEqual(['duration']);
    expect(askedKinds('Wann öffnet der Laden?')).toEqual(['time']);
    expect(askedKinds('Quanto custa o aluguel?')).toEqual(['price']);
    expect(askedKinds('How many people can join?')).toEqual(['count']);
    expect(askedKinds('How many km is the loop?')).toEqual(['distance']);
    expect(askedKinds('Do you sell helmets?')).toEqual([]);
  });

  it('tells a sentence holding that kind of fact', () => {
    expect(holdsKind('Price: 40 £ por persona', ['price'])).toBe(true);
    expect(holdsKind('The refit is free.', ['price'])).toBe(true);
    expect(holdsKind('We fix bikes.', ['price'])).toBe(false);
    expect(holdsKind('Todos los domingos a las 10:00', ['time'])).toBe(true);
    expect(holdsKind('Durée : trois heures', ['duration'])).toBe(true);
    expect(holdsKind('Weight: 23 kg.', ['weight'])).toBe(true);
    expect(holdsKind('Phone: 01632 960 418', ['phone'])).toBe(true);
    expect(holdsKind('Trade in a refurbished one.', ['count'])).toBe(false);
  });
});

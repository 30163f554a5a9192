import { describe, expect, it } from 'vitest';
import { detectLanguage, indexTerms, queryWords, wordsOf } from '../../src/modules/knowledge/analyzer.js';

describe('knowledge analyzer', () => {
  it('detects the five languages on ordinary sentences', () => {
    expect(detectLanguage('Where are you located? We would like to visit your shop next week.')).toBe('en');
    expect(detectLanguage('¿Dónde están ubicados? Queremos visitar la tienda la próxima semana.')).toBe('es');
    expect(detectLanguage('Où êtes-vous situés ? Nous voulons visiter le magasin la semaine prochaine.')).toBe('fr');
    expect(detectLanguage('Wo befindet sich Ihr Geschäft? Wir möchten nächste Woche vorbeikommen.')).toBe('de');
    expect(detectLanguage('Onde vocês estão localizados? Queremos visitar a loja na próxima semana.')).toBe('pt');
  });

  it('answers other for text in another language or without words', () => {
    expect(detectLanguage('Waar bevindt uw winkel zich? Wij willen volgende week langskomen.')).toBe('other');
    expect(detectLanguage('12345 67')).toBe('other');
    expect(detectLanguage('')).toBe('other');
  });

  it('stems in the language of the text and drops its stopwords', () => {
    expect(indexTerms('The parking is located behind the building', 'en')).toBe('park locat behind build');
    expect(indexTerms('Las reservaciones se hacen por teléfono', 'es')).toBe('reserv telefon');
    expect(indexTerms('Les réservations sont confirmées par courriel', 'fr')).toBe('reserv confirm courriel');
    expect(indexTerms('Die Öffnungszeiten der Geschäfte', 'de')).toBe('offnungszeit geschaft');
    expect(indexTerms('As reservas são confirmadas por telefone', 'pt')).toBe('reserv confirm telefon');
  });

  it('folds diacritics after stemming, so the stemmer sees the accents', () => {
    // Snowball reads "ées" as a suffix only with its accent: folding first would leave "reserve", "ecoute".
    expect(indexTerms('réservées écoutées', 'fr')).toBe('reserv ecout');
    expect(indexTerms('Dirección', 'es')).toBe('direccion');
    expect(indexTerms('ÉLÈVE Über', 'other')).toBe('eleve uber');
  });

  it('keeps digits and codes, lowercases other languages without stemming', () => {
    expect(indexTerms('Call 555-0199 about order A12B, model X200', 'en')).toBe('call 555 0199 order a12b model x200');
    expect(indexTerms('Parkeren achter het gebouw', 'other')).toBe('parkeren achter het gebouw');
    // NFKC: full-width letters and ligatures become plain ones.
    expect(indexTerms('ＡＢＣ ﬁle', 'other')).toBe('abc file');
  });

  it('reads words as runs of letters and digits only, whatever the text holds', () => {
    expect(wordsOf('"NEAR(open* -hours)" title:x ^a AND OR l\'adresse')).toEqual(['near', 'open', 'hours', 'title', 'x', 'a', 'and', 'or', 'l', 'adresse']);
  });

  it('analyses a question in every language, without the stopwords of the language it is in', () => {
    const words = queryWords('Where are you located?');
    expect(words.map((w) => w.word)).toEqual(['located']);
    expect(words[0]!.terms).toContain('locat');
    const spanish = queryWords('¿Cuál es la dirección de la tienda?');
    expect(spanish.map((w) => w.word)).toEqual(['direccion', 'tienda']);
    expect(spanish[0]!.terms).toContain('direccion');
    expect(queryWords('hello, what do you do?')).toEqual([]);
  });
});

describe('knowledge analyzer: language and words of real pages (issue 31)', () => {
  it('reads the language of the prose, not of the symbols around it', () => {
    // Table rules and a site name after "|" read as Hindi to the detector: the page stayed unstemmed.
    expect(detectLanguage('Rental prices | Example Cycles\nBike | Half-day | Day\nCity bike | £12 | £18\nA week costs the same as five days. Bikes are due back by 17:30.')).toBe('en');
    expect(detectLanguage('Sorties scolaires | Example Cycles\nNous accueillons les classes en voyage scolaire : un adulte pour six élèves.')).toBe('fr');
  });

  it('takes a text a good share of whose words are one language\'s stopwords for that language, and no other', () => {
    // The detector reads this short answer as Romanian.
    expect(detectLanguage('Is there a loyalty card?\n\nYes: the Example stamp card gives you a free basic tune-up after five paid services or rentals of a day or more.')).toBe('en');
    // An Italian text is a third Spanish stopwords, and about as much French: it stays of no known language.
    expect(detectLanguage('Il negozio è aperto dal lunedì al sabato, e la domenica solo la mattina per le riparazioni.')).toBe('other');
  });

  it('makes one word of a lone letter hyphenated to a word', () => {
    expect(wordsOf('E-bikes, e-mail and T-shirts')).toEqual(['ebikes', 'email', 'and', 'tshirts']);
    // Not a letter inside a hyphenated phrase: "a-t-il" stays its three pieces.
    expect(wordsOf('y a-t-il un parking ?')).toEqual(['y', 'a', 't', 'il', 'un', 'parking']);
  });

  it('never stems a word down to a stopword, at indexing or in a question', () => {
    // A question's stems that are stopwords are left out ("paris" as Portuguese is "par"), so a chunk keeps such a word whole.
    const paris = queryWords('Avez-vous une boutique à Paris ?').find((word) => word.word === 'paris');
    expect(paris?.terms).not.toContain('par');
    expect(indexTerms('The ups and downs of the coast road', 'en')).toBe('ups downs coast road');
    expect(queryWords('ups and downs').flatMap((word) => word.terms)).toEqual(expect.arrayContaining(['ups', 'downs']));
  });

  it('marks the capitalised words inside a sentence as names, except in German', () => {
    const names = (question: string) => queryWords(question).filter((word) => word.name).map((word) => word.word);
    expect(names('Do you have a shop in London?')).toEqual(['london']);
    expect(names('¿Tenéis una tienda en Madrid? Gracias')).toEqual(['madrid']);
    expect(names('Harbourside opening hours?')).toEqual([]);
    expect(names('Haben Sie eine Filiale in Berlin?')).toEqual([]);
  });
});

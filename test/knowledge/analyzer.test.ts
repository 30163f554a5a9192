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

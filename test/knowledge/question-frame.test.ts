import { describe, expect, it } from 'vitest';
import { askedKinds, askedObject, frameOf, holdsKind } from '../../src/modules/knowledge/question-frame.js';

describe('question frame', () => {
  it('names what a yes/no question about an offer asks for, in each language', () => {
    expect(askedObject('Do you rent kayaks?')).toEqual(['kayaks']);
    expect(askedObject('Can I rent a kayak?')).toEqual(['kayak']);
    expect(askedObject('Do you sell car roof racks?')).toEqual(['car', 'roof', 'racks']);
    expect(askedObject('Louez-vous des trottinettes électriques ?')).toEqual(['trottinettes', 'electriques']);
    expect(askedObject('Proposez-vous des cours de surf ?')).toEqual(['cours', 'surf']);
    expect(askedObject('¿Organizáis rutas en kayak?')).toEqual(['rutas', 'kayak']);
    expect(askedObject('Vocês alugam pranchas de surf?')).toEqual(['pranchas', 'surf']);
    expect(askedObject('Vermieten Sie E-Scooter?')).toEqual(['escooter']);
    // An adverb after the subject, a place after the thing, the Spanish "ustedes" form.
    expect(askedObject('Do you still use amalgam fillings?')).toEqual(['amalgam', 'fillings']);
    expect(askedObject('Do you have a shop in London?')).toEqual(['shop', 'london']);
    expect(askedObject('¿Tienen consulta en Madrid?')).toEqual(['consulta', 'madrid']);
    expect(askedObject('¿Alquilan bicicletas eléctricas?')).toEqual(['bicicletas', 'electricas']);
    // English words ending like a Spanish verb open no Spanish offer question; nor does a modal verb.
    for (const question of ['When does the Sunset Ride run?', 'Can teenagers join the tour?', '¿Pueden darme cita mañana?']) expect(askedObject(question), question).toEqual([]);
  });

  it('names nothing for other questions, and leaves frame words out', () => {
    expect(askedObject('How much is a tandem?')).toEqual([]);
    expect(askedObject('Can I learn to repair my own flat tyre?')).toEqual([]);
    expect(askedObject('Will you buy my old bike from me?')).toEqual(['bike']);
    expect(askedObject('Will you be open tomorrow?')).toEqual([]);
    expect(askedObject('Haben Sie heute geöffnet?')).toEqual([]);
    expect(askedObject('Haben Sie eine Filiale in Berlin?')).toEqual(['filiale', 'berlin']);
  });

  it('tells an email address from a street address, a battery charge from a price', () => {
    expect(askedKinds('What is your email address?')).toEqual(['email']);
    expect(askedKinds('What is your e-mail address?')).toEqual(['email']);
    expect(askedKinds('What is your address?')).toEqual(['address']);
    expect(askedKinds('The battery holds much less charge after a year: will you replace it?')).toEqual([]);
    expect(askedKinds('Do you charge for a puncture repair?')).toEqual(['price']);
    expect(askedKinds('Les professeurs doivent-ils payer leur vélo ?')).toEqual(['price']);
  });

  it('reads the range of a vehicle as a distance, and a hyphenated duration as one', () => {
    expect(askedKinds('What is the range of your e-bikes?')).toEqual(['distance']);
    expect(askedKinds('What is your price range?')).toEqual(['price']);
    expect(holdsKind('Every repair carries a 90-day guarantee on labour.', ['duration'])).toBe(true);
  });

  it('counts only a number standing next to what the question counts', () => {
    const bikes = (word: string) => ['bikes', 'bike', 'fleet'].includes(word);
    expect(holdsKind('We have two shops, a workshop and a fleet of rental bikes.', ['count'], bikes)).toBe(false);
    expect(holdsKind('Dev looks after the rental fleet of 86 bikes.', ['count'], bikes)).toBe(true);
    expect(holdsKind('Nous avons vingt vélos et trois boutiques.', ['count'], (word) => word === 'boutiques')).toBe(true);
    // Without the question's words, any number is a count.
    expect(holdsKind('We have two shops.', ['count'])).toBe(true);
  });

  it('asks for a year, not for opening hours, when a question asks when something happened', () => {
    expect(askedKinds('When did the Harbourside shop open?')).toEqual(['date']);
    expect(askedKinds('¿Desde cuándo existe la tienda?')).toEqual(['date']);
    expect(askedKinds('When does the shop open?')).toEqual(['time']);
    expect(holdsKind('The Harbourside shop opened in 2016.', ['date'])).toBe(true);
    expect(holdsKind('On Easter Monday the shop opens from 10:00 to 16:00.', ['date'])).toBe(false);
  });

  it('reads the visitor\'s own numbers and the unit of an asked distance as frame, not subject', () => {
    const company = frameOf('We are ten colleagues: can you organise a company outing?');
    expect(company('ten')).toBe(true);
    expect(company('colleagues')).toBe(false);
    expect(frameOf('I ride 20 km to the office each way')('20')).toBe(true);
    // A unit is the frame of a question asking for that distance, and the subject of one that does not.
    expect(frameOf('Combien de kilomètres fait la sortie ?')('kilometres')).toBe(true);
    expect(frameOf('I ride 20 km to the office each way')('km')).toBe(false);
    expect(frameOf('How much does it cost?')('cost')).toBe(true);
  });
});

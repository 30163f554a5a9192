import { describe, expect, it } from 'vitest';
import { askedKinds, askedObject, holdsKind } from '../../src/modules/knowledge/question-frame.js';

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
});

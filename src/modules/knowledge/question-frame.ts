import { fold, isStopword, writtenWords, type Stemmed } from './analyzer.js';

/**
 * The frame of a visitor's question: the words that say what kind of answer is wanted ("how much does … cost",
 * "combien de temps …") rather than what it is about, and the kinds of fact they ask for. A knowledge text
 * rarely repeats the frame ("Price: £49", not "the tour costs"), so frame words weigh little in how much of a
 * question a chunk answers, and the sentence holding the asked kind of fact is the one that answers it.
 * Five languages, written folded (no accents), as question words are compared.
 */

const FRAME_WORDS: ReadonlySet<string> = new Set([
  // en
  'cost', 'costs', 'price', 'prices', 'priced', 'fee', 'fees', 'charge', 'charges', 'much', 'many', 'long', 'time', 'times', 'number',
  'people', 'person', 'get', 'need', 'know', 'take', 'takes', 'happen', 'happens', 'kind', 'sort', 'type', 'way', 'want', 'available',
  'offer', 'give', 'pay', 'have', 'has', 'got', 'possible', 'allowed', 'old', 'far', 'heavy', 'big', 'often', 'days', 'day', 'which', 'what', 'when', 'where',
  // es
  'cuesta', 'cuestan', 'costar', 'cuanto', 'cuanta', 'cuantos', 'cuantas', 'precio', 'precios', 'tarifa', 'tiempo', 'numero', 'personas',
  'persona', 'hay', 'teneis', 'tienen', 'tiene', 'tienes', 'puedo', 'puede', 'podemos', 'necesito', 'hace', 'falta', 'saber', 'dura', 'duran', 'durar', 'cuando', 'donde', 'dias', 'dia',
  // fr
  'coute', 'coutent', 'couter', 'prix', 'tarif', 'tarifs', 'combien', 'temps', 'numero', 'personnes', 'faut', 'peux', 'peut', 'pouvons',
  'dois', 'doit', 'besoin', 'avez', 'avons', 'etes', 'faites', 'existe', 'savoir', 'dure', 'durent', 'durer', 'quand', 'ou', 'jours', 'jour', 'quel', 'quelle', 'quels', 'quelles',
  // de
  'kostet', 'kosten', 'preis', 'preise', 'viel', 'viele', 'lange', 'zeit', 'nummer', 'leute', 'personen', 'brauche', 'brauchen', 'kann',
  'konnen', 'haben', 'habt', 'hast', 'gibt', 'muss', 'mussen', 'dauert', 'wann', 'wo', 'tage', 'tag', 'welche', 'welcher', 'welches',
  // pt
  'custa', 'custam', 'custar', 'preco', 'precos', 'quanto', 'quanta', 'quantos', 'quantas', 'tempo', 'pessoas', 'pessoa', 'posso', 'pode',
  'podemos', 'preciso', 'tem', 'tens', 'temos', 'voces', 'durar', 'quando', 'onde', 'dias', 'qual', 'quais',
]);

/** Whether a (folded, lowercased) question word is one of the frame's. */
export function isFrameWord(word: string): boolean {
  return FRAME_WORDS.has(word);
}

/** The kinds of fact a question can ask for, each recognised in a sentence by its form. */
export type FactKind = 'price' | 'time' | 'date' | 'duration' | 'distance' | 'weight' | 'age' | 'count' | 'phone' | 'email' | 'address' | 'size';

const DAYS = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend|lunes|martes|miercoles|jueves|viernes|sabado|domingo'
  + '|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag'
  + '|segunda|terca|quarta|quinta|sexta';
const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december|enero|febrero|marzo|abril|mayo|junio'
  + '|julio|agosto|septiembre|octubre|noviembre|diciembre|janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre'
  + '|januar|februar|marz|juni|juli|oktober|dezember|janeiro|fevereiro|marco|junho|julho|setembro|outubro|novembro|dezembro';
const NUMBER_WORDS = 'two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|eighteen|twenty|thirty|forty|fifty|hundred|dozen|half|dos|tres|cuatro|cinco'
  + '|seis|siete|ocho|nueve|diez|deux|trois|quatre|cinq|sept|huit|neuf|dix|zwei|drei|vier|funf|sechs|sieben|acht|neun|zehn'
  + '|duas|quatro|cinco|oito|nove|dez';
const NUMBER = `(?:\\d+(?:[.,]\\d+)?|${NUMBER_WORDS})`;

// What asks for each kind (on the folded, lowercased question), and what holds it (on the folded, lowercased sentence).
const KINDS: Record<FactKind, { asked: RegExp; held: RegExp }> = {
  price: {
    asked: /\b(how much|cost|costs|price|prices|fee|fees|(?:you|they|we) charge|charge for|charges|pay|payer|pagar|zahlen|bezahlen|cuanto cuesta|cuanto cuestan|cuanto vale|cuanto es|precio|tarifa|combien coute|combien coutent|combien ca coute|prix|tarif|wie viel kostet|was kostet|kosten|preis|quanto custa|quanto e|preco)\b/,
    held: /[£€$]\s?\d|\d\s?[£€$]|\d\s?(?:eur|euros?|pounds?|gbp|usd)\b|\b(free|gratis|gratuit|gratuite|gratuitement|kostenlos|gratuito)\b/,
  },
  time: {
    asked: /\b(when|what time|which days?|what days?|opening hours|open on|cuando|que hora|a que hora|que dias|horario|quand|quelle heure|quels jours|horaires?|wann|um wie viel uhr|welche tage|offnungszeiten|quando|que horas|que dias)\b/,
    held: new RegExp(`\\b\\d{1,2}(?::\\d{2}|\\s?h\\s?\\d{0,2}|\\s?(?:am|pm|uhr))\\b|\\b(${DAYS})s?\\b|\\b(${MONTHS})\\b|\\b(daily|every day|todos los dias|tous les jours|taglich|todos os dias|closed|cerrado|ferme|geschlossen|fechado)\\b`),
  },
  // "When did … open?" asks for a point in the past, told by its year, not for the opening hours.
  date: {
    asked: /\b(when did|when was|when were|since when|what year|which year|en que ano|desde cuando|quelle annee|en quelle annee|depuis quand|in welchem jahr|seit wann|em que ano|desde quando)\b/,
    held: /\b(?:1[89]|20)\d{2}\b/,
  },
  duration: {
    asked: /\b(how long|how quickly|how soon|lead time|cuanto tiempo|cuanto dura|cuanto tarda|combien de temps|dure|wie lange|dauert|quanto tempo|quanto dura)\b/,
    held: new RegExp(`\\b${NUMBER}[\\s-]+(?:working\\s+|full\\s+)?(?:minutes?|hours?|days?|weeks?|months?|years?|minutos?|horas?|dias?|semanas?|meses|mes|anos?|heures?|jours?|semaines?|mois|ans|minuten|stunden?|tagen?|wochen?|monaten?|jahren?)\\b|\\b(duration|duracion|duree|dauer|duracao)\\b`),
  },
  distance: {
    asked: /\b(how far|how long is|distance|(?<!price )range|how many (?:km|kilometres|kilometers|miles)|cuantos kilometros|que distancia|combien de kilometres|quelle distance|wie weit|wie viele kilometer|quantos quilometros|que distancia)\b/,
    held: new RegExp(`\\b${NUMBER}\\s?(?:km|kilometres?|kilometers?|miles?|kilometros?|quilometros?|m)\\b`),
  },
  weight: {
    asked: /\b(how heavy|weigh|weighs|weight|cuanto pesa|peso|combien pese|poids|wie schwer|gewicht|quanto pesa)\b/,
    held: /\d\s?(?:kg|kilos?|kilograms?|g|lb|lbs)\b|\b(weight|peso|poids|gewicht)\b/,
  },
  age: {
    asked: /\b(how old|what age|minimum age|age limit|que edad|edad minima|quel age|age minimum|wie alt|mindestalter|que idade|idade minima)\b/,
    held: new RegExp(`\\b(age|aged|under|over|at least|edad|menores|mayores|age|ans|alter|jahre|idade|anos)\\b.*\\b${NUMBER}\\b|\\b${NUMBER}\\b.*\\b(years?|anos|ans|jahre)\\b`),
  },
  count: {
    asked: /\b(how many|cuantos|cuantas|combien de|wie viele|quantos|quantas)\b/,
    held: new RegExp(`\\b${NUMBER}\\b`),
  },
  phone: {
    asked: /\b(phone|telephone|call you|number to call|telefono|llamar|telephone|appeler|telefon|anrufen|telefone|ligar)\b/,
    held: /\+?\d[\d\s().-]{6,}\d/,
  },
  email: {
    asked: /\b(e[ -]?mail|email address|correo|courriel|adresse e ?mail|mail adresse)\b/,
    held: /[\w.+-]+@[\w-]+\.[\w.]+/,
  },
  address: {
    asked: /\b(where|(?<!mail )address|located|find you|donde|direccion|ou se trouve|ou etes|adresse|wo |anschrift|onde|endereco)\b/,
    held: /\b\d+[a-z]?\s+[\p{L}' ]+\b(street|st|road|rd|lane|avenue|square|quay|calle|rue|strasse|rua)\b|\b[a-z]{1,2}\d{1,2}[a-z]?\s?\d[a-z]{2}\b|\b(street|road|lane|avenue|quay)\b/u,
  },
  size: {
    asked: /\b(what sizes?|which sizes?|frame sizes?|how tall|que talla|que tallas|quelle taille|quelles tailles|welche grosse|welche grossen|que tamanho)\b/,
    held: /\b(sizes?|tallas?|tailles?|grossen?|tamanhos?)\b|\b\d+\s?cm\b|\b[smlx]{1,3}\b(?:,| and| y| et| und| e)/,
  },
};

const folded = (text: string) => fold(text.normalize('NFKC').toLowerCase()).replace(/['’]/g, ' ');

// The units a question asking for a distance or a weight names ("how many kilometres"): a page writes "28 km".
const UNIT_WORDS: Partial<Record<FactKind, ReadonlySet<string>>> = {
  distance: new Set(['km', 'kms', 'kilometres', 'kilometers', 'kilometre', 'kilometer', 'miles', 'mile', 'kilometros', 'kilometro', 'quilometros', 'quilometro', 'metres', 'meters', 'metros', 'metre', 'meter', 'metro']),
  weight: new Set(['kg', 'kilos', 'kilo', 'kilograms', 'kilogrammes', 'kilogramos', 'kilogramm', 'quilos', 'pounds', 'lbs', 'grams', 'grammes', 'gramos', 'gramm']),
};
const NUMBER_WORD = new RegExp(`^(?:${NUMBER_WORDS}|one|uno|una|un|une|eins|um|uma)$`);

/**
 * Whether a (folded, lowercased) word of this question is part of its frame rather than of its subject: a frame
 * word, the unit of the distance or weight it asks for, or a number written as a word ("we are ten colleagues",
 * "my daughter is five"): the visitor's own quantity, which the page states as its rule ("groups of eight or
 * more", "children aged 4 to 7"), not in the visitor's words.
 */
export function frameOf(question: string): (word: string) => boolean {
  const units = askedKinds(question).flatMap((kind) => [...(UNIT_WORDS[kind] ?? [])]);
  return (word) => FRAME_WORDS.has(word) || units.includes(word) || NUMBER_WORD.test(word) || /^\d+$/.test(word);
}

/** The kinds of fact a question asks for (none for a yes/no or open question). */
export function askedKinds(question: string): FactKind[] {
  const text = folded(question);
  const kinds = (Object.keys(KINDS) as FactKind[]).filter((kind) => KINDS[kind].asked.test(text));
  // "How many" is a count unless it asks for something more precise ("combien de temps", "how many km"); "when did"
  // asks for a date, not for the opening hours any "when" may ask for.
  const precise = kinds.length > 1 ? kinds.filter((kind) => kind !== 'count') : kinds;
  return precise.includes('date') ? precise.filter((kind) => kind !== 'time') : precise;
}

// A count answers "how many X" when the number stands this close to X ("a fleet of 86 bikes").
const COUNT_WINDOW = 2;
const NUMBER_TOKEN = new RegExp(`^${NUMBER}$`);

/**
 * Whether a sentence holds a fact of one of the kinds. A count must count what was asked about: with `counted`
 * (whether a word of the sentence is one of the question's), a number holds one only within a few words of such
 * a word; "two shops" does not say how many bikes there are.
 */
export function holdsKind(sentence: string, kinds: readonly FactKind[], counted?: (word: string) => boolean): boolean {
  if (kinds.length === 0) return false;
  const text = folded(sentence);
  return kinds.some((kind) => (kind === 'count' && counted ? countsNear(text, counted) : KINDS[kind].held.test(text)));
}

// Whether a number of the (folded) text stands within COUNT_WINDOW words of a counted word.
function countsNear(text: string, counted: (word: string) => boolean): boolean {
  const words = text.match(/[\p{L}\p{N}]+(?:[.,]\d+)?/gu) ?? [];
  return words.some((word, index) => NUMBER_TOKEN.test(word)
    && words.slice(Math.max(0, index - COUNT_WINDOW), index + COUNT_WINDOW + 1).some((near) => near !== word && counted(near)));
}

/**
 * How a yes/no question about an offer opens, per language, up to its verb: "do you (rent)", "can I (rent)",
 * "louez-vous", "¿alquiláis", "vocês (alugam)", "vermieten Sie". What follows the verb, past its articles,
 * names the thing asked about ("Do you rent kayaks?": kayaks).
 */
const OFFER_QUESTIONS: { language: Stemmed; opening: RegExp; determiners: ReadonlySet<string>; links: ReadonlySet<string> }[] = [
  // Not "will you be (open tomorrow)": a state, not an offer.
  { language: 'en', opening: /^(?:do|does|can|could|will|would|may) (?:you|i|we) (?:(?:still|also|ever|now|currently|really|actually|already|even) )?(?!be )[\p{L}\p{N}]+ /u,
    determiners: new Set(['a', 'an', 'the', 'any', 'some', 'my', 'our', 'your']), links: new Set(['in', 'near']) },
  { language: 'fr', opening: /^[\p{L}]+-vous /u,
    determiners: new Set(['des', 'les', 'un', 'une', 'du', 'de', 'la', 'le', 'l', 'd']), links: new Set(['de', 'd', 'en', 'a']) },
  { language: 'pt', opening: /^(?:voc[eê]s?|vcs?) [\p{L}]+ /u,
    determiners: new Set(['um', 'uma', 'uns', 'umas', 'o', 'a', 'os', 'as', 'algum', 'alguma', 'alguns', 'algumas']), links: new Set(['de', 'em']) },
  { language: 'de', opening: /^[\p{L}]+ (?:sie|ihr|du) /u,
    determiners: new Set(['ein', 'eine', 'einen', 'einem', 'den', 'die', 'das', 'der', 'dem', 'auch']), links: new Set(['in', 'aus', 'mit']) },
  // Vosotros ("¿alquiláis") and ustedes ("¿tienen", "¿alquilan": five letters or more, not "when", "can") forms, not
  // the modal verbs, which name no offer; tried after German, whose verbs end in -en too.
  { language: 'es', opening: /^¿?\s*(?!(?:pueden|deben|quieren|saben|podrían)\s)(?:[\p{L}]+(?:áis|éis|ís)|[\p{L}]{3,}(?:an|en)) /u,
    determiners: new Set(['un', 'una', 'unos', 'unas', 'el', 'la', 'los', 'las', 'algun', 'alguna', 'algunos', 'algunas']), links: new Set(['de', 'en']) },
];

/**
 * The words naming what a yes/no question about an offer asks for ("Louez-vous des trottinettes électriques ?":
 * trottinettes, electriques; "¿Organizáis rutas en kayak?": rutas, kayak), folded; none for other questions.
 * A text that does not name that thing does not answer the question, however much else of it it holds:
 * "we rent electric bikes" does not say whether electric scooters are for rent. Frame words ("old") are left
 * out; the noun phrase ends at its first stopword, or at the second where it goes on with a preposition of the
 * language's own ("cours de surf", "boutique à Paris").
 */
export function askedObject(question: string): string[] {
  const asWritten = question.normalize('NFKC').trim().replace(/\s+/g, ' ');
  const text = asWritten.toLowerCase();
  const shape = OFFER_QUESTIONS.find((candidate) => candidate.opening.test(text));
  if (!shape) return [];
  const rest = asWritten.slice(text.match(shape.opening)![0].length);
  const written = writtenWords(rest);
  const words = written.map((word) => fold(word.toLowerCase()));
  // German writes its nouns capitalised: "Haben Sie heute geöffnet?" names nothing, "Haben Sie E-Scooter?" does.
  const isNoun = (index: number) => shape.language !== 'de' || /^\p{Lu}/u.test(written[index]!);
  const object: string[] = [];
  let index = 0;
  let linked = false;
  for (;;) {
    while (index < words.length && shape.determiners.has(words[index]!)) index++;
    const start = object.length;
    while (index < words.length && !isStopword(words[index]!, [shape.language]) && isNoun(index)) {
      if (!isFrameWord(words[index]!)) object.push(words[index]!);
      index++;
    }
    if (linked || object.length === start || index >= words.length || !shape.links.has(words[index]!)) break;
    linked = true;
    index++;
  }
  return [...new Set(object)];
}

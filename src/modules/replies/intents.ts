import { fold } from '../knowledge/analyzer.js';

/** The five languages the agent's own words exist in. */
export type Lang = 'en' | 'es' | 'fr' | 'de' | 'pt';
export const LANGS: readonly Lang[] = ['en', 'es', 'fr', 'de', 'pt'];

/** The ordinary turns of a conversation that are not questions for the knowledge. */
export type Intent = 'greeting' | 'thanks' | 'goodbye' | 'identity' | 'handoff';

/** A message as intents are matched: lowercased, accents folded, punctuation gone, spaces single. */
export function normalise(text: string): string {
  return fold(text.normalize('NFKC').toLowerCase()).replace(/['’]/g, ' ').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

// Whole-message phrases: the message is only these (and a few fillers), so it is small talk, not a question.
const PHRASES: Record<Exclude<Intent, 'handoff'>, Record<Lang, string[]>> = {
  greeting: {
    en: ['hi', 'hello', 'hey', 'hiya', 'howdy', 'good morning', 'good afternoon', 'good evening', 'good day', 'greetings', 'how are you'],
    es: ['hola', 'buenos dias', 'buenas tardes', 'buenas noches', 'buenas', 'que tal', 'como estas'],
    fr: ['bonjour', 'salut', 'bonsoir', 'coucou', 'ca va', 'comment allez vous'],
    de: ['hallo', 'guten tag', 'guten morgen', 'guten abend', 'servus', 'moin', 'wie geht es ihnen', 'wie gehts'],
    pt: ['ola', 'oi', 'bom dia', 'boa tarde', 'boa noite', 'tudo bem'],
  },
  thanks: {
    en: ['thanks', 'thank you', 'thx', 'ty', 'cheers', 'much appreciated', 'great thanks', 'perfect thanks', 'thanks a lot'],
    es: ['gracias', 'muchas gracias', 'mil gracias', 'genial gracias', 'perfecto gracias'],
    fr: ['merci', 'merci beaucoup', 'merci bien', 'super merci', 'parfait merci'],
    de: ['danke', 'vielen dank', 'danke schon', 'dankeschon', 'super danke'],
    pt: ['obrigado', 'obrigada', 'muito obrigado', 'muito obrigada', 'valeu'],
  },
  goodbye: {
    en: ['bye', 'goodbye', 'bye bye', 'see you', 'see you later', 'have a nice day', 'good night', 'that s all'],
    es: ['adios', 'hasta luego', 'hasta pronto', 'chao', 'nos vemos', 'buen dia'],
    fr: ['au revoir', 'a bientot', 'bonne journee', 'bonne soiree', 'a plus'],
    de: ['tschuss', 'auf wiedersehen', 'bis bald', 'schonen tag noch', 'ciao'],
    pt: ['tchau', 'adeus', 'ate logo', 'ate mais', 'bom dia para voce'],
  },
  identity: {
    en: ['who are you', 'what are you', 'are you a bot', 'are you a robot', 'are you human', 'are you a human', 'are you a real person', 'are you an ai', 'what is your name', 'who am i talking to'],
    es: ['quien eres', 'quien es usted', 'que eres', 'eres un bot', 'eres un robot', 'eres humano', 'eres una persona', 'como te llamas'],
    fr: ['qui etes vous', 'qui es tu', 'tu es qui', 'es tu un robot', 'etes vous un robot', 'etes vous humain', 'es tu humain', 'comment tu t appelles'],
    de: ['wer bist du', 'wer sind sie', 'bist du ein bot', 'bist du ein roboter', 'bist du ein mensch', 'sind sie ein mensch', 'wie heisst du'],
    pt: ['quem e voce', 'quem es tu', 'voce e um robo', 'voce e humano', 'e um robo', 'qual e o seu nome', 'como voce se chama'],
  },
};

// Words that may surround a phrase without making the message a question.
const FILLERS = new Set('so very much again there all everyone folks ok okay oh ah great perfect nice y muy tres bien super alle sehr e a'.split(' '));

// A request for a person, anywhere in the message: a verb of talking or reaching, then someone human.
const HANDOFF: Record<Lang, RegExp[]> = {
  en: [
    /\b(speak|talk|chat|connect|transfer|put)\b.*\b(human|person|someone|somebody|agent|representative|operator|real person|staff member|member of staff|team member|people|receptionist|reception|manager|advisor|adviser)\b/,
    /\b(real|live) (person|human|agent)\b/, /^(human|agent|operator|representative)( please)?$/, /\bcustomer (service|support) (agent|representative)\b/,
  ],
  es: [/\b(hablar|contactar|comunicarme|pasar)\b.*\b(persona|humano|agente|alguien|empleado|operador)\b/, /\b(persona|agente) real\b/],
  fr: [/\b(parler|contacter|joindre|passer)\b.*\b(humain|personne|conseiller|conseillere|agent|quelqu un|operateur)\b/, /\b(vrai|vraie) (personne|humain)\b/],
  de: [/\b(sprechen|reden|verbinden)\b.*\b(mensch|menschen|mitarbeiter|mitarbeiterin|person|jemandem|berater)\b/, /\b(mensch|menschen|mitarbeiter|mitarbeiterin|person|jemandem)\b.*\b(sprechen|reden)\b/],
  pt: [/\b(falar|conversar|contactar|contatar)\b.*\b(humano|pessoa|atendente|alguem|agente|funcionario)\b/, /\b(pessoa|atendente) real\b/],
};

/** The small talk or handoff request a message is, and its language; null for anything else (a question). */
export function intentOf(text: string): { intent: Intent; language: Lang } | null {
  const normalised = normalise(text);
  if (normalised === '') return null;
  for (const language of LANGS) {
    if (HANDOFF[language].some((pattern) => pattern.test(normalised))) return { intent: 'handoff', language };
  }
  // A greeting may open any other turn ("Hi, who are you?"); thanks may come with a goodbye.
  const greetings = LANGS.flatMap((language) => PHRASES.greeting[language]);
  const thanks = LANGS.flatMap((language) => PHRASES.thanks[language]);
  for (const intent of ['identity', 'goodbye', 'thanks', 'greeting'] as const) {
    const allowed = intent === 'greeting' ? [] : intent === 'goodbye' ? [...greetings, ...thanks] : greetings;
    for (const language of LANGS) {
      if (onlyPhrases(normalised, PHRASES[intent][language], allowed)) return { intent, language };
    }
  }
  return courtesy(text, normalised);
}

// Ways a question opens, folded: a message opening so asks something, whatever courtesy it holds.
const QUESTION_OPENING = /^(?:(?:ok|okay|great|perfect|thanks|thank you|gracias|merci|danke|obrigad[oa])\s+)*(?:what|how|when|where|which|who|why|can|could|do|does|did|is|are|will|would|should|may|que|como|cuando|donde|cual|quien|puedo|puede|hay|tienen|qu est ce|comment|quand|ou|quel|quelle|est ce|pouvez|avez|was|wie|wann|wo|welche|wer|kann|konnen|haben|gibt|o que|onde|qual|quem|posso|pode|tem)\b/;
// Beside its thanks or goodbye, a courteous message says a few words more ("you've been very helpful"); a longer one says something else.
const COURTESY_REST_WORDS = 6;

/**
 * Thanks or a goodbye opening or closing an ordinary sentence ("Thanks, you've been very helpful!", "Perfect,
 * see you on Saturday then"): not a question (no question mark, no question opening) and only a few words
 * besides. A goodbye wins over thanks.
 */
function courtesy(text: string, normalised: string): { intent: Intent; language: Lang } | null {
  if (/[?¿]/.test(text) || QUESTION_OPENING.test(normalised)) return null;
  for (const intent of ['goodbye', 'thanks'] as const) {
    for (const language of LANGS) {
      const phrases = [...PHRASES[intent][language]].sort((a, b) => b.length - a.length);
      // The courtesy opens the message (after fillers: "Great, thanks…") or closes it ("…, thanks!").
      const words = normalised.split(' ');
      const opening = words.slice(words.findIndex((word) => !FILLERS.has(word))).join(' ');
      if (!phrases.some((phrase) => opening.startsWith(`${phrase} `) || normalised.endsWith(` ${phrase}`))) continue;
      let rest = ` ${normalised} `;
      for (const phrase of phrases) rest = rest.replaceAll(` ${phrase} `, ' ');
      for (const phrase of [...PHRASES.thanks[language], ...PHRASES.greeting[language]]) rest = rest.replaceAll(` ${phrase} `, ' ');
      const others = rest.trim().split(' ').filter((word) => word !== '' && !FILLERS.has(word));
      if (others.length <= COURTESY_REST_WORDS) return { intent, language };
    }
  }
  return null;
}

/** True when the message is made of these phrases (at least one), `allowed` ones and fillers, nothing else. */
function onlyPhrases(normalised: string, phrases: readonly string[], allowed: readonly string[]): boolean {
  let rest = ` ${normalised} `;
  let found = false;
  // Longest first, so "thank you" is taken whole before "you" could be left over.
  const remove = (list: readonly string[], counts: boolean) => {
    for (const phrase of [...list].sort((a, b) => b.length - a.length)) {
      const needle = ` ${phrase} `;
      while (rest.includes(needle)) {
        rest = rest.replace(needle, ' ');
        if (counts) found = true;
      }
    }
  };
  remove(phrases, true);
  if (!found) return false;
  remove(allowed, false);
  return rest.trim().split(' ').every((word) => word === '' || FILLERS.has(word));
}

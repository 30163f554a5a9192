import type { Lang } from './intents.js';

/** The agent's own words (not its knowledge's), in the five languages it speaks. `{name}`: the agent's name. */
export const PHRASES: Record<'greeting' | 'thanks' | 'goodbye' | 'identity' | 'decline' | 'unsure' | 'offer' | 'handoff' | 'contact' | 'fallback', Record<Lang, string>> = {
  greeting: {
    en: 'Hello! What would you like to know?',
    es: '¡Hola! ¿Qué te gustaría saber?',
    fr: 'Bonjour ! Que souhaitez-vous savoir ?',
    de: 'Hallo! Was möchten Sie wissen?',
    pt: 'Olá! O que gostaria de saber?',
  },
  thanks: {
    en: "You're welcome! Is there anything else I can help with?",
    es: '¡De nada! ¿Puedo ayudarte con algo más?',
    fr: 'Avec plaisir ! Puis-je vous aider pour autre chose ?',
    de: 'Gern geschehen! Kann ich sonst noch helfen?',
    pt: 'De nada! Posso ajudar com mais alguma coisa?',
  },
  goodbye: {
    en: 'Goodbye, and thanks for stopping by!',
    es: '¡Hasta luego, y gracias por tu visita!',
    fr: 'Au revoir, et merci de votre visite !',
    de: 'Auf Wiedersehen und danke für Ihren Besuch!',
    pt: 'Até logo, e obrigado pela visita!',
  },
  identity: {
    en: "I'm {name}, an AI assistant. I answer questions from this business's information, and I can put you in touch with a person.",
    es: 'Soy {name}, un asistente de IA. Respondo preguntas con la información de este negocio y puedo ponerte en contacto con una persona.',
    fr: "Je suis {name}, un assistant IA. Je réponds aux questions à partir des informations de l'entreprise et je peux vous mettre en relation avec une personne.",
    de: 'Ich bin {name}, ein KI-Assistent. Ich beantworte Fragen mit den Informationen dieses Unternehmens und kann Sie mit einem Menschen verbinden.',
    pt: 'Sou {name}, um assistente de IA. Respondo a perguntas com as informações deste negócio e posso pôr você em contato com uma pessoa.',
  },
  decline: {
    en: "I'm sorry, I don't know the answer to that.",
    es: 'Lo siento, no tengo información sobre eso.',
    fr: "Désolé, je n'ai pas d'information à ce sujet.",
    de: 'Das tut mir leid, dazu habe ich keine Informationen.',
    pt: 'Desculpe, não tenho informações sobre isso.',
  },
  // Opens a best-matches reply, before its list of pages.
  unsure: {
    en: "I'm not sure, but these may help:",
    es: 'No estoy seguro, pero esto puede ayudarte:',
    fr: "Je ne suis pas sûr, mais ceci peut vous aider :",
    de: 'Ich bin mir nicht sicher, aber das hier könnte helfen:',
    pt: 'Não tenho certeza, mas isto pode ajudar:',
  },
  // Closes a decline or a best-matches reply when lead capture is off.
  offer: {
    en: 'You can also ask to talk to a person.',
    es: 'También puedes pedir hablar con una persona.',
    fr: 'Vous pouvez aussi demander à parler à une personne.',
    de: 'Sie können auch darum bitten, mit einem Menschen zu sprechen.',
    pt: 'Você também pode pedir para falar com uma pessoa.',
  },
  handoff: {
    en: "Of course. I've let the team know, and a person will follow up with you here.",
    es: 'Por supuesto. He avisado al equipo y una persona te responderá aquí.',
    fr: "Bien sûr. J'ai prévenu l'équipe, et une personne vous répondra ici.",
    de: 'Natürlich. Ich habe das Team informiert, und ein Mensch meldet sich hier bei Ihnen.',
    pt: 'Claro. Avisei a equipe, e uma pessoa vai responder aqui.',
  },
  // The provider failed, timed out or said nothing.
  fallback: {
    en: "I'm sorry, I can't answer right now. Please try again in a moment.",
    es: 'Lo siento, ahora mismo no puedo responder. Inténtalo de nuevo en un momento.',
    fr: "Désolé, je ne peux pas répondre pour le moment. Réessayez dans un instant.",
    de: 'Das tut mir leid, ich kann gerade nicht antworten. Bitte versuchen Sie es gleich noch einmal.',
    pt: 'Desculpe, não consigo responder agora. Tente novamente daqui a pouco.',
  },
  contact: {
    en: 'If you leave your {fields}, someone from our team will get back to you.',
    es: 'Si nos dejas tu {fields}, alguien de nuestro equipo se pondrá en contacto contigo.',
    fr: "Si vous laissez votre {fields}, quelqu'un de notre équipe vous recontactera.",
    de: 'Wenn Sie Ihre {fields} hinterlassen, meldet sich jemand aus unserem Team bei Ihnen.',
    pt: 'Se deixar o seu {fields}, alguém da nossa equipe entrará em contato.',
  },
};

const FIELD_NAMES: Record<Lang, Record<string, string>> = {
  en: { name: 'name', email: 'email address', phone: 'phone number', company: 'company' },
  es: { name: 'nombre', email: 'correo electrónico', phone: 'teléfono', company: 'empresa' },
  fr: { name: 'nom', email: 'adresse e-mail', phone: 'numéro de téléphone', company: 'entreprise' },
  de: { name: 'Name', email: 'E-Mail-Adresse', phone: 'Telefonnummer', company: 'Firma' },
  pt: { name: 'nome', email: 'e-mail', phone: 'telefone', company: 'empresa' },
};
const AND: Record<Lang, string> = { en: 'and', es: 'y', fr: 'et', de: 'und', pt: 'e' };

/** "name, phone number and email address" in the language, for the fields an agent asks for (email when none). */
export function fieldList(fields: readonly string[], language: Lang): string {
  const names = (fields.length > 0 ? fields : ['email']).map((field) => FIELD_NAMES[language][field] ?? field);
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} ${AND[language]} ${names.at(-1)}`;
}

/** A phrase in the language, its `{name}` and `{fields}` filled in. */
export function phrase(key: keyof typeof PHRASES, language: Lang, values: { name?: string; fields?: string } = {}): string {
  return PHRASES[key][language].replace('{name}', values.name ?? '').replace('{fields}', values.fields ?? '');
}

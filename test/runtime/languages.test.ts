import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { makeChatbot } from '../helpers/factories.js';
import { makeActiveChatbot, startConversation, widget } from './support.js';

// The visitor's language: a short question is analysed within the languages the conversation can be in (the
// agent's, the visitor's browser's, its knowledge's); the agent's own words (declines, best matches, handoffs)
// come in the visitor's language; the welcome message and suggested questions can be given per language.

type Reply = { content: string; outcome: string; sources: { title: string }[] };

const TEU = {
  title: 'Treaties',
  content: 'The TEU sets out the values and aims of the Union and the powers of its institutions. The TFEU details how the Union works.',
};
const TRANSLATIONS = {
  es: { welcome_message: '¡Hola! ¿En qué puedo ayudarte?', suggested_questions: ['¿Dónde estáis?', '¿Cuánto cuesta alquilar una bici?'] },
  fr: { suggested_questions: ['Où êtes-vous ?'] },
};

let t: TestApp;
let tenant: Tenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
}, 60_000);
afterAll(async () => t?.close());

async function conversation(chatbotId: string, locale?: string) {
  return startConversation(t.app, chatbotId, locale ? { locale } : {});
}

async function ask(started: { conversation_id: string; visitor_token: string }, content: string): Promise<Reply> {
  const response = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { token: started.visitor_token, body: { content } });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { reply: Reply }).reply;
}

describe('a short question on an English agent', () => {
  it('"What does the TEU say?" keeps its words (read as Portuguese, "teu" would be a stopword) and finds the TEU passage', async () => {
    const bot = await makeActiveChatbot(tenant, { language: 'en', knowledge: [TEU, { title: 'Visits', content: 'Guided visits of the parliament run every weekday.' }] });
    const search = await tenant.request('GET', `/api/v1/chatbots/${bot.id}/knowledge/search?q=${encodeURIComponent('What does the TEU say?')}`);
    expect(search.statusCode, search.body).toBe(200);
    expect(search.json().data[0]).toMatchObject({ title: 'Treaties' });
    const reply = await ask(await conversation(bot.id), 'What does the TEU say?');
    expect(reply).toMatchObject({ outcome: 'answered', sources: [{ title: 'Treaties' }] });
    expect(reply.content).toContain('The TEU sets out the values and aims of the Union');
  });
});

describe('the agent\'s own words in the visitor\'s language', () => {
  it('declines, offers a person and hands off in Spanish to a Spanish visitor of an English agent', async () => {
    const bot = await makeActiveChatbot(tenant, { knowledge: [{ title: 'Opening hours', content: 'We are open Monday to Friday, 9am to 5pm.' }] });
    const started = await conversation(bot.id, 'es-ES');
    const declined = await ask(started, '¿Vendéis helicópteros?');
    expect(declined).toMatchObject({ outcome: 'unanswered', content: 'Lo siento, no tengo información sobre eso. También puedes pedir hablar con una persona.' });
    // Too short to tell its language: the browser's says it.
    expect((await ask(started, 'Helicópteros?')).content).toMatch(/^Lo siento/);
    const handoff = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/handoff`, { token: started.visitor_token, body: {} });
    expect(handoff.statusCode, handoff.body).toBe(200);
    expect(handoff.json().reply).toMatchObject({ outcome: 'handoff', content: 'Por supuesto. He avisado al equipo y una persona te responderá aquí.' });
  });

  it('offers the best matches and asks for contact details in French, and answers a French request for a person in French', async () => {
    const bot = await makeActiveChatbot(tenant, {
      knowledge: [{ title: 'Balade des vergers', content: 'La balade des vergers dure trois heures et part de la boutique du port.' }],
      lead_capture: { enabled: true, fields: ['email'], prompt: null },
    });
    const started = await conversation(bot.id, 'fr-FR');
    const unsure = await ask(started, 'La balade des vergers convient-elle à ma grand-mère âgée et fatiguée ?');
    expect(unsure.outcome).toBe('best_matches');
    expect(unsure.content).toMatch(/^Je ne suis pas sûr, mais ceci peut vous aider :\n\n- \*\*Balade des vergers\*\*: La balade des vergers dure trois heures/);
    expect(unsure.content).toMatch(/Si vous laissez votre adresse e-mail, quelqu'un de notre équipe vous recontactera\.$/);
    const person = await ask(await conversation(bot.id, 'fr'), 'Je voudrais parler à un conseiller');
    expect(person).toMatchObject({ outcome: 'handoff' });
    expect(person.content).toMatch(/^Bien sûr\. J'ai prévenu l'équipe/);
  });
});

describe('translations of the welcome message and suggested questions', () => {
  it('are stored on the agent, shown to the widget, and the welcome message is the visitor\'s language\'s', async () => {
    const bot = await makeActiveChatbot(tenant, { welcome_message: 'Hi! How can I help?', suggested_questions: ['Where are you?'], translations: TRANSLATIONS });
    const read = await tenant.request('GET', `/api/v1/chatbots/${bot.id}`);
    expect(read.json().translations).toEqual(TRANSLATIONS);
    const config = await widget(t.app, 'GET', `/widget/v1/chatbots/${bot.id}`);
    expect(config.json()).toMatchObject({ welcome_message: 'Hi! How can I help?', suggested_questions: ['Where are you?'], translations: TRANSLATIONS });

    expect((await conversation(bot.id, 'es-MX')).welcome_message).toBe('¡Hola! ¿En qué puedo ayudarte?');
    // French has suggested questions but no welcome message of its own; German has nothing: the agent's own.
    expect((await conversation(bot.id, 'fr')).welcome_message).toBe('Hi! How can I help?');
    expect((await conversation(bot.id, 'de-AT')).welcome_message).toBe('Hi! How can I help?');
    expect((await conversation(bot.id)).welcome_message).toBe('Hi! How can I help?');

    const patched = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { translations: { pt: { welcome_message: 'Olá!' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().translations).toEqual({ pt: { welcome_message: 'Olá!' } });
  });

  it('refuses a language the widget does not speak, an unknown field, and a bad locale', async () => {
    const bot = await makeChatbot(tenant);
    for (const translations of [{ it: { welcome_message: 'Ciao' } }, { es: { welcome: 'Hola' } }, { es: { suggested_questions: Array.from({ length: 7 }, () => '¿?') } }]) {
      const response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { translations });
      expectProblem(response, 400, 'validation_failed');
    }
    const active = await makeActiveChatbot(tenant);
    const refused = await widget(t.app, 'POST', `/widget/v1/chatbots/${active.id}/conversations`, { body: { locale: 'es_ES; drop table' } });
    expectProblem(refused, 400, 'validation_failed');
  });
});

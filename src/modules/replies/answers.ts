import type { Selectable } from 'kysely';
import type { ChatbotsTable } from '../../db/schema.js';
import { parseJson } from '../../lib/json.js';
import type { Lang } from './intents.js';
import { fieldList, phrase } from './phrases.js';

/** An agent's lead capture settings as stored (JSON text). */
interface LeadCapture {
  enabled: boolean;
  fields: string[];
  prompt: string | null;
}

/** The agent's lead capture settings; off when absent or corrupt. */
export function leadCaptureOf(chatbot: Pick<Selectable<ChatbotsTable>, 'lead_capture'>): LeadCapture {
  const stored = parseJson<Partial<LeadCapture>>(chatbot.lead_capture, {});
  return {
    enabled: stored.enabled === true,
    fields: Array.isArray(stored.fields) ? stored.fields.filter((field) => typeof field === 'string') : [],
    prompt: typeof stored.prompt === 'string' && stored.prompt.trim() !== '' ? stored.prompt.trim() : null,
  };
}

/** "name, phone number and email address" for the fields an agent asks for (email when none are set), in English. */
export function contactFieldsText(fields: readonly string[]): string {
  return fieldList(fields, 'en');
}

/** The sentence asking a visitor for contact details: the agent's own prompt, or one built from its fields, in the language. */
export function contactRequest(leadCapture: LeadCapture, language: Lang = 'en'): string {
  return leadCapture.prompt ?? phrase('contact', language, { fields: fieldList(leadCapture.fields, language) });
}

/**
 * What the agent says when a visitor asks for a person: the team is told and a person will follow up here;
 * when lead capture is on and the visitor left no contact details yet, it asks for them.
 */
export function handoffAnswer(chatbot: Pick<Selectable<ChatbotsTable>, 'lead_capture'>, hasContact: boolean, language: Lang = 'en'): string {
  const leadCapture = leadCaptureOf(chatbot);
  const text = phrase('handoff', language);
  return leadCapture.enabled && !hasContact ? `${text} ${contactRequest(leadCapture, language)}` : text;
}

/** The polite answer given when the provider failed, timed out or said nothing, in the language. */
export function fallbackAnswer(chatbot: Pick<Selectable<ChatbotsTable>, 'lead_capture'>, language: Lang = 'en'): string {
  const leadCapture = leadCaptureOf(chatbot);
  const apology = phrase('fallback', language);
  return leadCapture.enabled ? `${apology} ${contactRequest(leadCapture, language)}` : apology;
}

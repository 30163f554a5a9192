import type { Agent, Appearance } from '../../types';

/** The contact fields lead capture can ask for. */
export const LEAD_FIELDS = ['name', 'email', 'phone', 'company'] as const satisfies readonly Agent['lead_capture']['fields'][number][];

/** The languages of the widget's own words. */
export const LANGUAGES = [
  ['auto', "Visitor's browser language"],
  ['en', 'English'],
  ['es', 'Español'],
  ['fr', 'Français'],
  ['de', 'Deutsch'],
  ['pt', 'Português'],
] as const;

/** The editor's sections, in order: the `#fragment` of each and its tab label. */
export const SECTIONS = [
  ['behaviour', 'Behaviour'],
  ['sources', 'Sources'],
  ['widget', 'Widget'],
  ['lead-capture', 'Lead capture'],
  ['install', 'Install'],
] as const;

/** One of the editor's sections. */
export type Section = (typeof SECTIONS)[number][0];

/** The section a `#fragment` names (Behaviour when it names none). */
export function sectionOf(hash: string): Section {
  return SECTIONS.find(([id]) => id === hash)?.[0] ?? 'behaviour';
}

/** The editable fields of an agent as the form holds them (numbers and lists as typed text); translations are set through the API. */
export type Draft = Omit<Agent, 'id' | 'object' | 'metadata' | 'status' | 'created_at' | 'updated_at' | 'published_at' | 'temperature' | 'allowed_origins' | 'suggested_questions' | 'language' | 'translations' | 'appearance'> & {
  temperature: string;
  allowed_origins: string;
  suggested_questions: string;
  language: Agent['language'];
  appearance: Appearance;
};

/** A change to some fields of the draft. */
export type SetDraft = (changes: Partial<Draft>) => void;

/** The form's values for a saved agent. */
export function toDraft(agent: Agent): Draft {
  return {
    name: agent.name,
    description: agent.description,
    instructions: agent.instructions,
    welcome_message: agent.welcome_message,
    model: agent.model,
    temperature: agent.temperature === null ? '' : String(agent.temperature),
    knowledge: agent.knowledge,
    lead_capture: agent.lead_capture,
    allowed_origins: agent.allowed_origins.join('\n'),
    suggested_questions: agent.suggested_questions.join('\n'),
    language: agent.language,
    appearance: agent.appearance,
  };
}

/** The non-empty lines of a textarea. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The PATCH body for a draft. */
export function toBody(draft: Draft) {
  return {
    name: draft.name,
    description: draft.description || null,
    instructions: draft.instructions,
    welcome_message: draft.welcome_message || null,
    model: draft.model?.trim() || null,
    temperature: draft.temperature.trim() === '' ? null : Number(draft.temperature),
    knowledge: draft.knowledge,
    lead_capture: { ...draft.lead_capture, prompt: draft.lead_capture.prompt || null },
    allowed_origins: draft.allowed_origins.split(/\s+/).filter(Boolean),
    suggested_questions: lines(draft.suggested_questions),
    language: draft.language,
    appearance: draft.appearance,
  };
}

/** The state changes offered from each state, with a confirmation for the ones that cannot be undone. */
export const TRANSITIONS: Record<Agent['status'], { to: Agent['status']; label: string; confirm?: string }[]> = {
  draft: [{ to: 'active', label: 'Publish' }],
  active: [{ to: 'paused', label: 'Pause' }, { to: 'archived', label: 'Archive', confirm: 'Archive this agent? It stops answering and can no longer be edited.' }],
  paused: [{ to: 'active', label: 'Resume' }, { to: 'archived', label: 'Archive', confirm: 'Archive this agent? It stops answering and can no longer be edited.' }],
  archived: [],
};

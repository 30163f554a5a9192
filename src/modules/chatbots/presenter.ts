import { parseJson } from '../../lib/json.js';
import { presentAppearance } from './appearance.js';
import type { ChatbotRow } from './repository.js';
import type { ChatbotStatus, ChatbotView } from './schema.js';

const DEFAULT_LEAD_CAPTURE: ChatbotView['lead_capture'] = { enabled: false, fields: ['email'], prompt: null };

/** Turns a stored agent into its API shape. */
export function presentChatbot(row: ChatbotRow): ChatbotView {
  return {
    id: row.id,
    object: 'chatbot',
    name: row.name,
    description: row.description,
    status: row.status as ChatbotStatus,
    instructions: row.instructions,
    welcome_message: row.welcome_message,
    model: row.model,
    temperature: row.temperature === null ? null : Number(row.temperature),
    knowledge: parseJson(row.knowledge, []),
    lead_capture: parseJson(row.lead_capture, DEFAULT_LEAD_CAPTURE),
    allowed_origins: parseJson(row.allowed_origins, []),
    suggested_questions: parseJson(row.suggested_questions, []),
    language: row.language as ChatbotView['language'],
    translations: parseJson(row.translations, {}),
    appearance: presentAppearance(row.appearance),
    metadata: parseJson(row.metadata, {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
    published_at: row.published_at,
  };
}

export { DEFAULT_LEAD_CAPTURE };

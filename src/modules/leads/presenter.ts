import { parseJson } from '../../lib/json.js';
import type { LeadRow } from './repository.js';
import type { LeadView } from './schema.js';

/** Turns a stored lead into its API shape. */
export function presentLead(row: LeadRow): LeadView {
  return {
    id: row.id,
    object: 'lead',
    chatbot_id: row.chatbot_id,
    conversation_id: row.conversation_id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    company: row.company,
    status: row.status as LeadView['status'],
    source: row.source as LeadView['source'],
    custom_fields: parseJson(row.custom_fields, {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

import { parseJson } from '../../lib/json.js';
import type { ConversationRow } from './repository.js';
import type { ConversationView } from './schema.js';

/** Turns a stored conversation into its API shape. */
export function presentConversation(row: ConversationRow): ConversationView {
  return {
    id: row.id,
    object: 'conversation',
    chatbot_id: row.chatbot_id,
    status: row.status as ConversationView['status'],
    mode: row.mode as ConversationView['mode'],
    channel: row.channel as ConversationView['channel'],
    visitor: { id: row.visitor_id, name: row.visitor_name, email: row.visitor_email },
    lead_id: row.lead_id,
    message_count: Number(row.message_count),
    last_message_at: row.last_message_at,
    metadata: parseJson(row.metadata, {}),
    handoff_requested_at: row.handoff_requested_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

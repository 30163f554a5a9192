import { parseJson } from '../../lib/json.js';
import type { ConversationRow, ConversationSummary } from './repository.js';
import type { ConversationView } from './schema.js';

const NO_SUMMARY: ConversationSummary = { lead_name: null, lead_email: null, lead_updated_at: null, last_role: null, last_content: null, last_created_at: null };

/**
 * Turns a stored conversation into its API shape. Reads select the summary with the row (the lead's contact
 * details win over what was given at the start; the newest message); the write paths' event payloads carry
 * the row as they changed it, without a summary.
 */
export function presentConversation(row: ConversationRow & Partial<ConversationSummary>): ConversationView {
  const summary = { ...NO_SUMMARY, ...row };
  return {
    id: row.id,
    object: 'conversation',
    chatbot_id: row.chatbot_id,
    status: row.status as ConversationView['status'],
    mode: row.mode as ConversationView['mode'],
    channel: row.channel as ConversationView['channel'],
    origin: row.origin,
    visitor: { id: row.visitor_id, name: summary.lead_name ?? row.visitor_name, email: summary.lead_email ?? row.visitor_email },
    lead_id: row.lead_id,
    message_count: Number(row.message_count),
    last_message_at: row.last_message_at,
    last_message:
      summary.last_role !== null && summary.last_created_at !== null
        ? { role: summary.last_role as NonNullable<ConversationView['last_message']>['role'], content: summary.last_content ?? '', created_at: summary.last_created_at }
        : null,
    metadata: parseJson(row.metadata, {}),
    handoff_requested_at: row.handoff_requested_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

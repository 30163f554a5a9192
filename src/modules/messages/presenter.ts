import type { MessageRow } from './repository.js';
import type { MessageView } from './schema.js';

/** Turns a stored message into its API shape. */
export function presentMessage(row: MessageRow): MessageView {
  return {
    id: row.id,
    object: 'message',
    conversation_id: row.conversation_id,
    role: row.role as MessageView['role'],
    content: row.content,
    author: { type: row.author_type as MessageView['author']['type'], id: row.author_id },
    created_at: row.created_at,
  };
}

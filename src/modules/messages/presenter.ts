import { parseJson } from '../../lib/json.js';
import type { MessageRow, MessageWithFeedback } from './repository.js';
import { MESSAGE_OUTCOMES, type MessageOutcome, type MessageView } from './schema.js';

const isOutcome = (value: string | null): value is MessageOutcome => (MESSAGE_OUTCOMES as readonly (string | null)[]).includes(value);

/** Turns a stored message (with its feedback columns when read with them) into its API shape. */
export function presentMessage(row: MessageRow | MessageWithFeedback): MessageView {
  const rated = 'feedback_rating' in row && row.feedback_rating !== null;
  return {
    id: row.id,
    object: 'message',
    conversation_id: row.conversation_id,
    role: row.role as MessageView['role'],
    content: row.content,
    author: { type: row.author_type as MessageView['author']['type'], id: row.author_id },
    sources: parseJson(row.sources, []),
    feedback: rated ? { rating: row.feedback_rating as 'up' | 'down', comment: row.feedback_comment, updated_at: row.feedback_updated_at! } : null,
    outcome: isOutcome(row.outcome) ? row.outcome : null,
    created_at: row.created_at,
  };
}

import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../lib/versioning.js';
import type { AuditWriter } from '../audit/writer.js';
import type { ConversationService } from '../conversations/service.js';
import { presentMessage } from '../messages/presenter.js';
import { messageRepository } from '../messages/repository.js';
import type { MessageView } from '../messages/schema.js';
import { dayOf, statsRepository } from '../stats/repository.js';
import { feedbackRepository } from './repository.js';

/** A visitor's rating of an answer, with an optional comment. */
export interface FeedbackInput {
  rating: 'up' | 'down';
  comment?: string;
}

const COUNTER = { up: 'feedback_up', down: 'feedback_down' } as const;

/** Visitor feedback on the agent's answers: one current rating per answer, counted and audited. */
export function createFeedbackService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, conversations: ConversationService) {
  return {
    /**
     * Rates an assistant message of the conversation (404 for any other message); a new rating replaces the
     * earlier one. The day's counters follow (by the day of the answer), so analytics always counts the latest.
     */
    async rate(ctx: OperationContext, conversationId: string, messageId: string, input: FeedbackInput): Promise<MessageView> {
      return inTransaction(db, ctx, async (trx) => {
        // The conversation's row lock serializes ratings of its answers (PostgreSQL), so counters stay exact.
        const conversation = await conversations.load({ ...ctx, trx }, conversationId, { forUpdate: true });
        const message = isId('message', messageId) ? await messageRepository.find(trx, ctx.actor.workspaceId, messageId) : undefined;
        if (!message || message.conversation_id !== conversation.id || message.role !== 'assistant') throw AppError.notFound('answer', messageId);
        const before = await feedbackRepository.find(trx, ctx.actor.workspaceId, message.id);
        const comment = input.comment ?? null;
        const now = clock.now();
        const at = before ? nextUpdatedAt(before.updated_at, now) : now.toISOString();
        if (before) {
          await feedbackRepository.update(trx, ctx.actor.workspaceId, message.id, { rating: input.rating, comment, updated_at: at });
          if (before.rating !== input.rating) {
            await statsRepository.bump(trx, message.workspace_id, dayOf(message.created_at), message.chatbot_id, { [COUNTER[before.rating]]: -1, [COUNTER[input.rating]]: 1 });
          }
        } else {
          await feedbackRepository.insert(trx, {
            message_id: message.id,
            workspace_id: message.workspace_id,
            chatbot_id: message.chatbot_id,
            conversation_id: message.conversation_id,
            rating: input.rating,
            comment,
            created_at: at,
            updated_at: at,
          });
          await statsRepository.bump(trx, message.workspace_id, dayOf(message.created_at), message.chatbot_id, { [COUNTER[input.rating]]: 1 });
        }
        await audit.record(trx, ctx, {
          action: 'message.rated',
          target: { type: 'message', id: message.id },
          changes: {
            rating: { before: before?.rating ?? null, after: input.rating },
            ...((before?.comment ?? null) !== comment ? { comment: { before: before?.comment ?? null, after: comment } } : {}),
          },
        });
        return presentMessage({ ...message, feedback_rating: input.rating, feedback_comment: comment, feedback_updated_at: at });
      });
    },
  };
}

export type FeedbackService = ReturnType<typeof createFeedbackService>;

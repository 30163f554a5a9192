import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { createdRange } from '../../http/filters.js';
import { pageRequest, toPage, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../lib/versioning.js';
import { assertAgentTalks } from '../chatbots/availability.js';
import { chatbotRepository } from '../chatbots/repository.js';
import type { ConversationRow } from '../conversations/repository.js';
import { conversationRepository } from '../conversations/repository.js';
import type { ConversationService } from '../conversations/service.js';
import { presentMessage } from './presenter.js';
import { messageRepository, type MessageRow } from './repository.js';
import type { CreateMessageInput, ListMessagesFilters, MessageView } from './schema.js';
import type { AuditWriter } from '../audit/writer.js';
import type { EventWriter } from '../events/writer.js';
import { presentConversation } from '../conversations/presenter.js';
import { dayOf, statsRepository, type Counter } from '../stats/repository.js';
import { recordUnanswered } from '../analytics/unanswered.js';
import { leavesQuestionOpen, type MessageSource, type ReplyOutcome } from '../replies/engine.js';

/**
 * The seam where the agent's answer to a `user` message is requested. It is called inside the message's
 * transaction, so a durable implementation can record its job atomically with the message.
 */
export interface ReplyRequester {
  requestReply(trx: Transaction<Database>, conversation: ConversationRow, message: MessageRow): Promise<void>;
}

/** The reply requester until the chat runtime exists: agents do not answer yet. */
export const noReplies: ReplyRequester = { requestReply: async () => undefined };

/** A message to append, with its author spelled out (runtime, seeder and API all append through here). */
export interface AppendMessageInput {
  role: MessageView['role'];
  content: string;
  author: MessageView['author'];
  /**
   * An agent answer's documents and kind of turn, as the reply engine returned them, with the visitor text it
   * answers: an `unanswered` or `best_matches` turn records that question, a `handoff` marks the conversation as waiting for a person.
   */
  answer?: { sources: MessageSource[]; outcome: ReplyOutcome; question: string | null };
}

/** Messages of conversations: list, and append (which keeps the conversation's counters right). */
export function createMessageService(
  db: Kysely<Database>,
  clock: Clock,
  audit: AuditWriter,
  events: EventWriter,
  conversations: ConversationService,
  replies: ReplyRequester,
) {
  async function append(ctx: OperationContext, conversationId: string, input: AppendMessageInput): Promise<MessageView> {
    return inTransaction(db, ctx, async (trx) => {
      const conversation = await conversations.load({ ...ctx, trx }, conversationId, { forUpdate: true });
      if (conversation.status === 'closed') {
        throw new AppError('conversation_closed', 'This conversation is closed and accepts no new messages.');
      }
      // A visitor's message would make a paused or archived agent answer (and spend); a person may still write.
      if (input.role === 'user') assertAgentTalks(await chatbotRepository.find(trx, ctx.actor.workspaceId, conversation.chatbot_id), conversation);
      const now = clock.now();
      // Strictly after the previous message, so a transcript's order never depends on id randomness.
      const createdAt = conversation.last_message_at ? nextUpdatedAt(conversation.last_message_at, now) : now.toISOString();
      const row: MessageRow = {
        id: newId('message', Date.parse(createdAt)),
        workspace_id: ctx.actor.workspaceId,
        conversation_id: conversation.id,
        chatbot_id: conversation.chatbot_id,
        role: input.role,
        content: input.content,
        author_type: input.author.type,
        author_id: input.author.id,
        created_at: createdAt,
        sources: JSON.stringify(input.answer?.sources ?? []),
        outcome: input.answer?.outcome ?? null,
      };
      await messageRepository.insert(trx, row);
      const updated: ConversationRow = {
        ...conversation,
        message_count: Number(conversation.message_count) + 1,
        last_message_at: createdAt,
        updated_at: nextUpdatedAt(conversation.updated_at, new Date(createdAt)),
        mode: input.role === 'operator' ? 'human' : conversation.mode,
      };
      await conversationRepository.update(trx, ctx.actor.workspaceId, conversation.id, {
        message_count: updated.message_count,
        last_message_at: updated.last_message_at,
        updated_at: updated.updated_at,
        mode: updated.mode,
      });
      const counters: Partial<Record<Counter, number>> = { [`messages_${input.role}`]: 1 };
      // The answer rate's two counters (docs/decisions/0004: counted with the write, never by scanning messages);
      // a best-matches answer did not answer from knowledge.
      if (input.answer?.outcome === 'answered') counters.answered = 1;
      else if (input.answer && leavesQuestionOpen(input.answer.outcome)) counters.unanswered = 1;
      if (dayOf(createdAt) === dayOf(conversation.created_at)) {
        await statsRepository.bump(trx, row.workspace_id, dayOf(createdAt), row.chatbot_id, { ...counters, conversation_messages: 1 });
      } else {
        await statsRepository.bump(trx, row.workspace_id, dayOf(createdAt), row.chatbot_id, counters);
        await statsRepository.bump(trx, row.workspace_id, dayOf(conversation.created_at), row.chatbot_id, { conversation_messages: 1 });
      }
      await audit.record(trx, ctx, {
        action: 'message.created',
        target: { type: 'message', id: row.id },
        changes: {
          conversation_id: { before: null, after: row.conversation_id },
          role: { before: null, after: row.role },
          content: { before: null, after: row.content },
          ...(updated.mode !== conversation.mode ? { 'conversation.mode': { before: conversation.mode, after: updated.mode } } : {}),
          ...(input.answer ? { outcome: { before: null, after: input.answer.outcome }, sources: { before: null, after: input.answer.sources } } : {}),
        },
      });
      const message = presentMessage(row);
      await events.emit(trx, row.workspace_id, 'message.created', message);
      // An operator's message takes over from the agent: the conversation's mode changed.
      if (updated.mode !== conversation.mode) await events.emit(trx, row.workspace_id, 'conversation.updated', presentConversation(updated));
      if (input.answer && leavesQuestionOpen(input.answer.outcome) && input.answer.question !== null) await recordUnanswered(trx, row, input.answer.question);
      if (input.answer?.outcome === 'handoff') await conversations.markHandoff({ ...ctx, trx }, updated, createdAt);
      if (input.role === 'user' && updated.mode === 'agent') await replies.requestReply(trx, updated, row);
      return message;
    });
  }

  return {
    append,

    /** Sends a message into a conversation through the API, authored by the calling key. */
    async send(ctx: OperationContext, conversationId: string, input: CreateMessageInput): Promise<MessageView> {
      return append(ctx, conversationId, {
        role: input.role ?? 'user',
        content: input.content,
        author: { type: ctx.actor.type === 'system' ? 'user' : (ctx.actor.type as MessageView['author']['type']), id: ctx.actor.id },
      });
    },

    /** A page of a conversation's messages, oldest first unless `order=desc`. */
    async list(ctx: OperationContext, conversationId: string, query: ListMessagesFilters): Promise<Page<MessageView>> {
      const conversation = await conversations.load(ctx, conversationId);
      const filters = { list: 'messages', conversation: conversation.id, ...createdRange(query) };
      const page = pageRequest(query, filters, query.order ?? 'asc');
      const rows = await messageRepository.list(db, ctx.actor.workspaceId, conversation.id, filters, page);
      return toPage(rows, page, filters, presentMessage);
    },
  };
}

export type MessageService = ReturnType<typeof createMessageService>;

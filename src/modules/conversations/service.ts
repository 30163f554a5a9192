import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { createdRange } from '../../http/filters.js';
import { pageRequest, toPage, type Keyset, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { etagOf, nextUpdatedAt } from '../../lib/versioning.js';
import { chatbotRepository } from '../chatbots/repository.js';
import { exportFile, type ExportedConversation, type ExportedMessage, type ExportFile } from './export.js';
import { presentConversation } from './presenter.js';
import { conversationRepository, type ConversationRow } from './repository.js';
import type { ConversationView, ExportConversationsFilters, ListConversationsFilters } from './schema.js';
import { diffChanges, type AuditWriter } from '../audit/writer.js';
import type { EventWriter } from '../events/writer.js';
import { dayOf, statsRepository } from '../stats/repository.js';

/** Input for a new conversation (the chat runtime and the demo seeder start them). */
export interface StartConversationInput {
  chatbotId: string;
  channel: ConversationView['channel'];
  visitor?: { name?: string | null; email?: string | null };
  metadata?: Record<string, string>;
  /** The visitor's id when the caller made it already (the widget audits the start with it as actor). */
  visitorId?: string;
  /** The website the widget ran on (normalized origin), when it was not the service's own hosted page. */
  origin?: string | null;
  /** The visitor's browser language tag, as the widget sent it. */
  locale?: string | null;
}

/** How many conversations the export reads (with their messages) per query. */
const EXPORT_PAGE = 200;
const MAX_SEARCH_WORDS = 8;

type FilterQuery = Omit<ListConversationsFilters, 'limit' | 'cursor'>;

// The words of a search, lower-cased (the repository matches lower(content)); 400 past MAX_SEARCH_WORDS.
function searchWords(q: string | undefined): string[] | undefined {
  const words = (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length > MAX_SEARCH_WORDS) {
    throw AppError.validation(`Search for at most ${MAX_SEARCH_WORDS} words.`, [{ parameter: 'q', message: `at most ${MAX_SEARCH_WORDS} words` }]);
  }
  return words.length > 0 ? words : undefined;
}

/** The list's filters from its query, normalised (bad instants and searches are 400s here, before any streaming). */
function listFilters(query: FilterQuery) {
  return {
    list: 'conversations',
    chatbotId: query.chatbot_id,
    status: query.status,
    channel: query.channel,
    mode: query.mode,
    handoff: query.handoff,
    words: searchWords(query.q),
    ...createdRange(query),
  };
}

/** Conversations: read through the API; started by the chat runtime. */
export function createConversationService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, events: EventWriter) {
  return {
    /** Loads a conversation row of the actor's workspace, or 404. */
    async load(ctx: OperationContext, id: string, options: { forUpdate?: boolean } = {}): Promise<ConversationRow> {
      const row = isId('conversation', id) ? await conversationRepository.find(ctx.trx ?? db, ctx.actor.workspaceId, id, options) : undefined;
      if (!row) throw AppError.notFound('conversation', id);
      return row;
    },

    /** One conversation with its visitor and newest message, and its ETag (which a change of its lead moves too). */
    async get(ctx: OperationContext, id: string): Promise<{ conversation: ConversationView; etag: string }> {
      const row = isId('conversation', id) ? await conversationRepository.findSummary(db, ctx.actor.workspaceId, id) : undefined;
      if (!row) throw AppError.notFound('conversation', id);
      const version = row.lead_updated_at !== null && row.lead_updated_at > row.updated_at ? row.lead_updated_at : row.updated_at;
      return { conversation: presentConversation(row), etag: etagOf(row.id, version) };
    },

    /** A page of the workspace's conversations, newest first, whatever their channel. */
    async list(ctx: OperationContext, query: ListConversationsFilters): Promise<Page<ConversationView>> {
      const filters = listFilters(query);
      const page = pageRequest(query, filters);
      const rows = await conversationRepository.list(db, ctx.actor.workspaceId, filters, page);
      return toPage(rows, page, filters, presentConversation);
    },

    /**
     * Every conversation matching the list's filters, newest first, with its messages, as a file. The filters
     * are checked now (a 400 comes before any byte); the conversations are then read one keyset page at a
     * time as the file is consumed, so an export of any size holds one page in memory.
     */
    export(ctx: OperationContext, query: ExportConversationsFilters): ExportFile {
      const filters = listFilters(query);
      const workspaceId = ctx.actor.workspaceId;
      async function* conversations(): AsyncGenerator<ExportedConversation> {
        let after: Keyset | null = null;
        for (;;) {
          const rows = await conversationRepository.list(db, workspaceId, filters, { limit: EXPORT_PAGE, after, order: 'desc' });
          const page = rows.slice(0, EXPORT_PAGE);
          const transcripts = new Map<string, ExportedMessage[]>();
          for (const { conversation_id: conversationId, ...message } of await conversationRepository.transcripts(db, workspaceId, page.map((row) => row.id))) {
            const list = transcripts.get(conversationId) ?? [];
            list.push(message);
            transcripts.set(conversationId, list);
          }
          for (const row of page) yield { ...presentConversation(row), messages: transcripts.get(row.id) ?? [] };
          const last = page[page.length - 1];
          if (rows.length <= EXPORT_PAGE || !last) return;
          after = { createdAt: last.created_at, id: last.id };
        }
      }
      return exportFile(conversations(), query.format ?? 'jsonl', clock.now().toISOString().slice(0, 10));
    },

    /**
     * Closes a conversation (idempotent); a closed conversation refuses new messages. With `idleBefore`
     * (the idle sweep) it closes only if its last activity is still before that instant, checked under
     * the row lock, so a message that arrived since the sweep looked keeps the conversation open.
     */
    async close(ctx: OperationContext, id: string, options: { idleBefore?: string } = {}): Promise<ConversationView> {
      return inTransaction(db, ctx, async (trx) => {
        const row = await this.load({ ...ctx, trx }, id, { forUpdate: true });
        if (row.status === 'closed') return presentConversation(row);
        if (options.idleBefore !== undefined && (row.last_message_at ?? row.created_at) >= options.idleBefore) return presentConversation(row);
        const closed = { ...row, status: 'closed', updated_at: nextUpdatedAt(row.updated_at, clock.now()) };
        await conversationRepository.update(trx, ctx.actor.workspaceId, row.id, { status: closed.status, updated_at: closed.updated_at });
        await statsRepository.bump(trx, row.workspace_id, dayOf(row.created_at), row.chatbot_id, { conversations_open: -1, conversations_closed: 1 });
        await audit.record(trx, ctx, { action: 'conversation.closed', target: { type: 'conversation', id: row.id }, changes: { status: { before: row.status, after: 'closed' } } });
        const view = presentConversation(closed);
        await events.emit(trx, row.workspace_id, 'conversation.updated', view);
        return view;
      });
    },

    /** Hands a conversation an operator took over back to the agent (mode human → agent), audited. */
    async handBack(ctx: OperationContext, id: string): Promise<ConversationView> {
      return inTransaction(db, ctx, async (trx) => {
        const row = await this.load({ ...ctx, trx }, id, { forUpdate: true });
        if (row.status === 'closed') throw new AppError('conversation_closed', 'This conversation is closed.');
        if (row.mode === 'agent') return presentConversation(row);
        const updated = { ...row, mode: 'agent', updated_at: nextUpdatedAt(row.updated_at, clock.now()) };
        await conversationRepository.update(trx, ctx.actor.workspaceId, row.id, { mode: updated.mode, updated_at: updated.updated_at });
        await audit.record(trx, ctx, { action: 'conversation.handed_back', target: { type: 'conversation', id: row.id }, changes: { mode: { before: row.mode, after: 'agent' } } });
        const view = presentConversation(updated);
        await events.emit(trx, row.workspace_id, 'conversation.updated', view);
        return view;
      });
    },

    /**
     * Marks a conversation (its row locked by the caller, in `ctx.trx`) as waiting for a person, once: the first
     * request's time is kept. Counted in the day's `handoffs` and audited. Returns the row as updated.
     */
    async markHandoff(ctx: OperationContext & { trx: Transaction<Database> }, row: ConversationRow, at: string): Promise<ConversationRow> {
      if (row.handoff_requested_at !== null) return row;
      const updated = { ...row, handoff_requested_at: at, updated_at: nextUpdatedAt(row.updated_at, new Date(at)) };
      await conversationRepository.update(ctx.trx, row.workspace_id, row.id, { handoff_requested_at: at, updated_at: updated.updated_at });
      await statsRepository.bump(ctx.trx, row.workspace_id, dayOf(at), row.chatbot_id, { handoffs: 1 });
      await audit.record(ctx.trx, ctx, { action: 'conversation.handoff_requested', target: { type: 'conversation', id: row.id }, changes: { handoff_requested_at: { before: null, after: at } } });
      await events.emit(ctx.trx, row.workspace_id, 'conversation.updated', presentConversation(updated));
      return updated;
    },

    /** Starts a conversation with an agent of the actor's workspace. */
    /** Whether a visitor has chatted in the widget on a website of the workspace (not the hosted page). */
    async hasWebsiteTraffic(ctx: OperationContext): Promise<boolean> {
      return conversationRepository.anyFromWebsite(db, ctx.actor.workspaceId);
    },

    async start(ctx: OperationContext, input: StartConversationInput): Promise<ConversationView> {
      return inTransaction(db, ctx, async (trx) => {
        const bot = isId('chatbot', input.chatbotId) ? await chatbotRepository.find(trx, ctx.actor.workspaceId, input.chatbotId) : undefined;
        if (!bot) throw AppError.notFound('AI Agent', input.chatbotId);
        const now = clock.now();
        const at = now.toISOString();
        const row: ConversationRow = {
          id: newId('conversation', now.getTime()),
          workspace_id: ctx.actor.workspaceId,
          chatbot_id: bot.id,
          status: 'open',
          mode: 'agent',
          channel: input.channel,
          visitor_id: input.visitorId ?? newId('visitor', now.getTime()),
          visitor_name: input.visitor?.name ?? null,
          visitor_email: input.visitor?.email ?? null,
          lead_id: null,
          message_count: 0,
          last_message_at: null,
          metadata: JSON.stringify(input.metadata ?? {}),
          created_at: at,
          updated_at: at,
          handoff_requested_at: null,
          origin: input.origin ?? null,
          locale: input.locale ?? null,
        };
        await conversationRepository.insert(trx, row);
        await statsRepository.bump(trx, row.workspace_id, dayOf(at), bot.id, { conversations_open: 1 });
        const view = presentConversation(row);
        await audit.record(trx, ctx, {
          action: 'conversation.created',
          target: { type: 'conversation', id: row.id },
          changes: diffChanges(null, view, ['chatbot_id', 'channel', 'visitor', 'metadata']),
        });
        await events.emit(trx, row.workspace_id, 'conversation.created', view);
        return view;
      });
    },
  };
}

export type ConversationService = ReturnType<typeof createConversationService>;

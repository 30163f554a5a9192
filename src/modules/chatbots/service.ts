import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ReadCache } from '../../db/read-cache.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { createdRange } from '../../http/filters.js';
import { pageRequest, toPage, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { etagOf, ifMatchSatisfied, nextUpdatedAt } from '../../lib/versioning.js';
import { DEFAULT_APPEARANCE, mergeAppearance, presentAppearance } from './appearance.js';
import { normalizeAllowedOrigins } from './origins.js';
import { DEFAULT_LEAD_CAPTURE, presentChatbot } from './presenter.js';
import { chatbotRepository, type ChatbotRow } from './repository.js';
import type { ChatbotStatus, ChatbotView, CreateChatbotInput, ListChatbotsFilters, UpdateChatbotInput } from './schema.js';
import { assertTransition } from './transitions.js';
import { diffChanges, type AuditWriter } from '../audit/writer.js';
import type { EventWriter } from '../events/writer.js';
import { replaceKnowledgeSources, type HandWrittenOptions } from '../sources/hand-written.js';
import { sourceRepository } from '../sources/repository.js';

/** An agent together with its current ETag. */
export interface VersionedChatbot {
  chatbot: ChatbotView;
  etag: string;
}

const JSON_FIELDS = ['knowledge', 'lead_capture', 'allowed_origins', 'suggested_questions', 'translations', 'metadata'] as const;
/** The fields whose changes the audit log records. */
const AUDITED = ['name', 'description', 'status', 'instructions', 'welcome_message', 'model', 'temperature', 'knowledge', 'lead_capture', 'allowed_origins', 'suggested_questions', 'language', 'translations', 'appearance', 'metadata', 'published_at'] as const;
const PLAIN_FIELDS = ['name', 'description', 'instructions', 'welcome_message', 'model', 'temperature', 'language'] as const;

function versioned(row: ChatbotRow): VersionedChatbot {
  return { chatbot: presentChatbot(row), etag: etagOf(row.id, row.updated_at) };
}

/** AI Agents: create drafts, read, list, update and move through their states. */
export function createChatbotService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, events: EventWriter, cache: ReadCache, handWritten: HandWrittenOptions = { embed: false }, wake: () => void = () => undefined) {
  async function load(ctx: OperationContext, id: string, executor = ctx.trx ?? db, forUpdate = false): Promise<ChatbotRow> {
    const row = isId('chatbot', id) ? await chatbotRepository.find(executor, ctx.actor.workspaceId, id, { forUpdate }) : undefined;
    if (!row) throw AppError.notFound('AI Agent', id);
    return row;
  }

  // Agents are read far more often than they change: presented agents are kept in the read cache, and
  // forgotten once a change has committed.
  const cacheKey = (workspaceId: string, id: string) => `chatbot:${workspaceId}/${id}`;

  return {
    /** Creates an agent as a draft. */
    async create(ctx: OperationContext, input: CreateChatbotInput): Promise<VersionedChatbot> {
      const now = clock.now();
      const at = now.toISOString();
      const row: ChatbotRow = {
        id: newId('chatbot', now.getTime()),
        workspace_id: ctx.actor.workspaceId,
        name: input.name.trim() || input.name,
        description: input.description ?? null,
        status: 'draft',
        instructions: input.instructions ?? '',
        welcome_message: input.welcome_message === undefined ? 'Hi! How can I help you today?' : input.welcome_message,
        model: input.model ?? null,
        temperature: input.temperature ?? null,
        knowledge: JSON.stringify(input.knowledge ?? []),
        lead_capture: JSON.stringify(input.lead_capture ?? DEFAULT_LEAD_CAPTURE),
        allowed_origins: JSON.stringify(normalizeAllowedOrigins(input.allowed_origins ?? [])),
        metadata: JSON.stringify(input.metadata ?? {}),
        created_at: at,
        updated_at: at,
        published_at: null,
        suggested_questions: JSON.stringify(input.suggested_questions ?? []),
        language: input.language ?? 'auto',
        translations: JSON.stringify(input.translations ?? {}),
        appearance: JSON.stringify(mergeAppearance(DEFAULT_APPEARANCE, input.appearance ?? {})),
      };
      const result = versioned(row);
      await inTransaction(db, ctx, async (trx) => {
        await chatbotRepository.insert(trx, row);
        if (result.chatbot.knowledge.length > 0) {
          // Retrieval reads knowledge sources: each entry is mirrored as a text source (origin 'knowledge').
          await replaceKnowledgeSources(trx, clock, row.workspace_id, row.id, result.chatbot.knowledge, handWritten);
        }
        await audit.record(trx, ctx, { action: 'chatbot.created', target: { type: 'chatbot', id: row.id }, changes: diffChanges(null, result.chatbot, AUDITED) });
        await events.emit(trx, row.workspace_id, 'chatbot.created', result.chatbot);
      });
      if (handWritten.embed && result.chatbot.knowledge.length > 0) wake();
      return result;
    },

    /** One agent of the actor's workspace. */
    async get(ctx: OperationContext, id: string): Promise<VersionedChatbot> {
      // Inside a transaction the read must see the transaction's own writes: never from the cache.
      if (ctx.trx) return versioned(await load(ctx, id));
      // `load` throws 404 for an unknown agent, so only found agents are kept.
      const chatbot = (await cache.get(cacheKey(ctx.actor.workspaceId, id), async () => presentChatbot(await load(ctx, id))))!;
      return { chatbot, etag: etagOf(chatbot.id, chatbot.updated_at) };
    },

    /** A page of the workspace's agents, newest first. */
    async list(ctx: OperationContext, query: ListChatbotsFilters): Promise<Page<ChatbotView>> {
      const filters = { list: 'chatbots', status: query.status, ...createdRange(query) };
      const page = pageRequest(query, filters);
      const rows = await chatbotRepository.list(db, ctx.actor.workspaceId, filters, page);
      return toPage(rows, page, filters, presentChatbot);
    },

    /**
     * Partially updates an agent. `ifMatch` (the If-Match header) must match the current ETag when given.
     * Archived agents are read-only; status changes follow the state machine.
     */
    async update(ctx: OperationContext, id: string, input: UpdateChatbotInput, ifMatch?: string): Promise<VersionedChatbot> {
      const updated = await inTransaction(db, ctx, async (trx) => {
        const current = await load(ctx, id, trx, true);
        if (!ifMatchSatisfied(ifMatch, etagOf(current.id, current.updated_at))) {
          throw new AppError('precondition_failed', 'The AI Agent has changed since you read it: fetch it again and retry with its new ETag.');
        }
        const from = current.status as ChatbotStatus;
        if (from === 'archived') {
          throw new AppError('chatbot_archived', 'This AI Agent is archived and can no longer be changed.');
        }
        const next: ChatbotRow = { ...current };
        for (const field of PLAIN_FIELDS) {
          if (input[field] !== undefined) (next as Record<string, unknown>)[field] = input[field];
        }
        for (const field of JSON_FIELDS) {
          if (input[field] !== undefined) next[field] = JSON.stringify(field === 'allowed_origins' ? normalizeAllowedOrigins(input.allowed_origins!) : input[field]);
        }
        if (input.appearance !== undefined) {
          const before = presentAppearance(current.appearance);
          const after = mergeAppearance(before, input.appearance);
          // Unchanged when it presents the same (a stored '{}' and the defaults written out are one look).
          if (JSON.stringify(after) !== JSON.stringify(before)) next.appearance = JSON.stringify(after);
        }
        const to = input.status ?? from;
        // Publishing needs something to answer with: instructions, `knowledge` entries, or a ready knowledge source.
        const readySources = to === 'active' && from !== 'active' ? await sourceRepository.countReady(trx, ctx.actor.workspaceId, id) : 0;
        assertTransition(from, to, {
          name: next.name,
          instructions: next.instructions,
          knowledgeCount: (input.knowledge ?? presentChatbot(current).knowledge).length + readySources,
        });
        next.status = to;
        const now = clock.now();
        if (to === 'active' && from !== 'active' && current.published_at === null) next.published_at = now.toISOString();
        const changed = Object.keys(next).filter((key) => next[key as keyof ChatbotRow] !== current[key as keyof ChatbotRow]);
        if (changed.length === 0) return versioned(current);
        next.updated_at = nextUpdatedAt(current.updated_at, now);
        const changes = Object.fromEntries([...changed, 'updated_at'].map((key) => [key, next[key as keyof ChatbotRow]]));
        await chatbotRepository.update(trx, ctx.actor.workspaceId, id, changes);
        // The knowledge sources follow the knowledge field in the same transaction, so a reply never sees a stale one.
        if (changed.includes('knowledge')) {
          await replaceKnowledgeSources(trx, clock, ctx.actor.workspaceId, id, input.knowledge ?? [], handWritten);
        }
        const result = versioned(next);
        await audit.record(trx, ctx, {
          action: 'chatbot.updated',
          target: { type: 'chatbot', id },
          changes: diffChanges(presentChatbot(current), result.chatbot, AUDITED),
        });
        await events.emit(trx, ctx.actor.workspaceId, 'chatbot.updated', result.chatbot);
        return result;
      });
      // Updates never join a caller's transaction (PATCH takes no Idempotency-Key): the change has committed.
      cache.invalidate(cacheKey(ctx.actor.workspaceId, id));
      if (handWritten.embed && input.knowledge !== undefined) wake();
      return updated;
    },
  };
}

export type ChatbotService = ReturnType<typeof createChatbotService>;

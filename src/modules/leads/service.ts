import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { createdRange, instant } from '../../http/filters.js';
import { pageRequest, toPage, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { etagOf, ifMatchSatisfied, nextUpdatedAt } from '../../lib/versioning.js';
import { chatbotRepository } from '../chatbots/repository.js';
import { conversationRepository } from '../conversations/repository.js';
import { presentLead } from './presenter.js';
import { leadRepository, type LeadRow } from './repository.js';
import type { CreateLeadInput, LeadView, ListLeadsFilters, UpdateLeadInput } from './schema.js';
import { diffChanges, type AuditWriter } from '../audit/writer.js';
import type { EventWriter } from '../events/writer.js';
import { dayOf, statsRepository } from '../stats/repository.js';

/** A lead together with its current ETag. */
export interface VersionedLead {
  lead: LeadView;
  etag: string;
}

const EDITABLE = ['name', 'email', 'phone', 'company', 'status'] as const;
/** The fields whose changes the audit log records. */
export const AUDITED_LEAD_FIELDS = ['chatbot_id', 'conversation_id', 'name', 'email', 'phone', 'company', 'status', 'source', 'custom_fields'] as const;

function normaliseEmail(email: string | null | undefined): string | null | undefined {
  return typeof email === 'string' ? email.trim().toLowerCase() : email;
}

function requireContact(row: Pick<LeadRow, 'email' | 'phone'>): void {
  if (!row.email && !row.phone) {
    throw AppError.validation('A lead needs an email or a phone number.', [
      { pointer: '/email', message: 'an email or a phone is required' },
      { pointer: '/phone', message: 'an email or a phone is required' },
    ]);
  }
}

function versioned(row: LeadRow): VersionedLead {
  return { lead: presentLead(row), etag: etagOf(row.id, row.updated_at) };
}

/** Leads: captured by the chat runtime, created and updated through the API and the dashboard. */
export function createLeadService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, events: EventWriter) {
  // Resolves the optional agent and conversation a lead belongs to, both within the workspace.
  async function resolveLinks(trx: Transaction<Database>, workspaceId: string, input: CreateLeadInput) {
    let chatbotId = input.chatbot_id ?? null;
    const conversationId = input.conversation_id ?? null;
    if (conversationId !== null) {
      const conversation = isId('conversation', conversationId) ? await conversationRepository.find(trx, workspaceId, conversationId, { forUpdate: true }) : undefined;
      if (!conversation) throw AppError.validation('No such conversation in this workspace.', [{ pointer: '/conversation_id', message: 'no such conversation' }]);
      if (chatbotId !== null && chatbotId !== conversation.chatbot_id) {
        throw AppError.validation('The conversation belongs to another AI Agent.', [{ pointer: '/chatbot_id', message: 'does not match the conversation' }]);
      }
      chatbotId = conversation.chatbot_id;
      return { chatbotId, conversation };
    }
    if (chatbotId !== null) {
      const bot = isId('chatbot', chatbotId) ? await chatbotRepository.find(trx, workspaceId, chatbotId) : undefined;
      if (!bot) throw AppError.validation('No such AI Agent in this workspace.', [{ pointer: '/chatbot_id', message: 'no such AI Agent' }]);
    }
    return { chatbotId, conversation: undefined };
  }

  async function load(ctx: OperationContext, id: string, executor = ctx.trx ?? db, forUpdate = false): Promise<LeadRow> {
    const row = isId('lead', id) ? await leadRepository.find(executor, ctx.actor.workspaceId, id, { forUpdate }) : undefined;
    if (!row) throw AppError.notFound('lead', id);
    return row;
  }

  return {
    /** Creates a lead; `source` says where it came from (the API, the widget, the dashboard). */
    async create(ctx: OperationContext, input: CreateLeadInput, source: LeadView['source'] = 'api'): Promise<VersionedLead> {
      return inTransaction(db, ctx, async (trx) => {
        const { chatbotId, conversation } = await resolveLinks(trx, ctx.actor.workspaceId, input);
        const now = clock.now();
        const at = now.toISOString();
        const row: LeadRow = {
          id: newId('lead', now.getTime()),
          workspace_id: ctx.actor.workspaceId,
          chatbot_id: chatbotId,
          conversation_id: conversation?.id ?? null,
          name: input.name ?? null,
          email: normaliseEmail(input.email) ?? null,
          phone: input.phone ?? null,
          company: input.company ?? null,
          status: input.status ?? 'new',
          source,
          custom_fields: JSON.stringify(input.custom_fields ?? {}),
          created_at: at,
          updated_at: at,
        };
        requireContact(row);
        await leadRepository.insert(trx, row);
        await statsRepository.bump(trx, row.workspace_id, dayOf(at), chatbotId, { leads: 1 });
        if (conversation && conversation.lead_id === null) {
          await statsRepository.bump(trx, row.workspace_id, dayOf(conversation.created_at), conversation.chatbot_id, { conversations_with_lead: 1 });
          await conversationRepository.update(trx, ctx.actor.workspaceId, conversation.id, {
            lead_id: row.id,
            updated_at: nextUpdatedAt(conversation.updated_at, now),
          });
        }
        const result = versioned(row);
        await audit.record(trx, ctx, { action: 'lead.created', target: { type: 'lead', id: row.id }, changes: diffChanges(null, result.lead, AUDITED_LEAD_FIELDS) });
        await events.emit(trx, row.workspace_id, 'lead.created', result.lead);
        return result;
      });
    },

    /** One lead of the actor's workspace. */
    async get(ctx: OperationContext, id: string): Promise<VersionedLead> {
      return versioned(await load(ctx, id));
    },

    /** A page of the workspace's leads, newest first. */
    async list(ctx: OperationContext, query: ListLeadsFilters & { search?: string }): Promise<Page<LeadView>> {
      const filters = {
        search: query.search?.trim() || undefined,
        list: 'leads',
        chatbotId: query.chatbot_id,
        conversationId: query.conversation_id,
        status: query.status,
        email: normaliseEmail(query.email) ?? undefined,
        updatedAfter: instant(query.updated_after, 'updated_after'),
        ...createdRange(query),
      };
      const page = pageRequest(query, filters);
      const rows = await leadRepository.list(db, ctx.actor.workspaceId, filters, page);
      return toPage(rows, page, filters, presentLead);
    },

    /** Partially updates a lead; `ifMatch` must match the current ETag when given. */
    async update(ctx: OperationContext, id: string, input: UpdateLeadInput, ifMatch?: string): Promise<VersionedLead> {
      return inTransaction(db, ctx, async (trx) => {
        const current = await load(ctx, id, trx, true);
        if (!ifMatchSatisfied(ifMatch, etagOf(current.id, current.updated_at))) {
          throw new AppError('precondition_failed', 'The lead has changed since you read it: fetch it again and retry with its new ETag.');
        }
        const next: LeadRow = { ...current };
        for (const field of EDITABLE) {
          if (input[field] !== undefined) (next as Record<string, unknown>)[field] = field === 'email' ? normaliseEmail(input.email) : input[field];
        }
        if (input.custom_fields !== undefined) next.custom_fields = JSON.stringify(input.custom_fields);
        requireContact(next);
        const changed = Object.keys(next).filter((key) => next[key as keyof LeadRow] !== current[key as keyof LeadRow]);
        if (changed.length === 0) return versioned(current);
        next.updated_at = nextUpdatedAt(current.updated_at, clock.now());
        const changes = Object.fromEntries([...changed, 'updated_at'].map((key) => [key, next[key as keyof LeadRow]]));
        await leadRepository.update(trx, ctx.actor.workspaceId, id, changes);
        const result = versioned(next);
        await audit.record(trx, ctx, { action: 'lead.updated', target: { type: 'lead', id }, changes: diffChanges(presentLead(current), result.lead, AUDITED_LEAD_FIELDS) });
        await events.emit(trx, current.workspace_id, 'lead.updated', result.lead);
        return result;
      });
    },
  };
}

export type LeadService = ReturnType<typeof createLeadService>;

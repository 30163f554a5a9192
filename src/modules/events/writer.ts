import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { eventRepository, type EventRow } from './repository.js';

/** Every type of domain event, `resource.verb`. */
export const EVENT_TYPES = [
  'conversation.created',
  'conversation.updated',
  'message.created',
  'lead.created',
  'lead.updated',
  'chatbot.created',
  'chatbot.updated',
  'source.synced',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** An event as it was appended, its data still as the object the service passed. */
export interface AppendedEvent extends Omit<EventRow, 'data'> {
  type: EventType;
  data: object;
}

/**
 * Runs in the transaction of every event appended, after the event's row: what else must commit (or roll
 * back) with it. Live streams are told on commit (src/modules/events/live.ts); webhook deliveries are queued.
 */
export type EventListener = (trx: Transaction<Database>, event: AppendedEvent) => Promise<void>;

/** The conversation an event concerns, from its payload: a conversation's own id, else the resource's `conversation_id`. */
export function conversationOf(type: string, data: object): string | null {
  const fields = data as { id?: unknown; conversation_id?: unknown };
  const id = type.startsWith('conversation.') ? fields.id : fields.conversation_id;
  return typeof id === 'string' ? id : null;
}

/**
 * The one event writer. Appends an event, with the resource as the API presents it, inside the caller's
 * transaction: the change and its event commit together or not at all.
 */
export function createEventWriter(clock: Clock, listeners: readonly EventListener[] = []) {
  return {
    async emit(trx: Transaction<Database>, workspaceId: string, type: EventType, data: object): Promise<void> {
      const seq = await eventRepository.claimSeq(trx, workspaceId);
      const now = clock.now();
      const event: AppendedEvent = { id: newId('event', now.getTime()), workspace_id: workspaceId, seq, type, created_at: now.toISOString(), data, conversation_id: conversationOf(type, data) };
      await eventRepository.insert(trx, { ...event, data: JSON.stringify(data) });
      for (const listener of listeners) await listener(trx, event);
    },
  };
}

export type EventWriter = ReturnType<typeof createEventWriter>;

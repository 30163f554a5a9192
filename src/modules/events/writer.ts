import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { eventRepository } from './repository.js';

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

/**
 * The one event writer. Appends an event, with the resource as the API presents it, inside the caller's
 * transaction: the change and its event commit together or not at all.
 */
export function createEventWriter(clock: Clock) {
  return {
    async emit(trx: Transaction<Database>, workspaceId: string, type: EventType, data: object): Promise<void> {
      const seq = await eventRepository.claimSeq(trx, workspaceId);
      const now = clock.now();
      await eventRepository.insert(trx, { id: newId('event', now.getTime()), workspace_id: workspaceId, seq, type, created_at: now.toISOString(), data: JSON.stringify(data) });
    },
  };
}

export type EventWriter = ReturnType<typeof createEventWriter>;

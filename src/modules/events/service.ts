import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { instant } from '../../http/filters.js';
import { pageRequest, toPage, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import { parseJson } from '../../lib/json.js';
import { eventRepository, type EventRow } from './repository.js';
import type { EventView, ListEventsFilters } from './schema.js';
import { EVENT_TYPES } from './writer.js';

function present(row: EventRow): EventView {
  return { id: row.id, object: 'event', type: row.type as EventView['type'], created_at: row.created_at, workspace_id: row.workspace_id, data: parseJson(row.data, {}) };
}

function typesOf(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const types = [...new Set(value.split(','))];
  const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) {
    throw AppError.validation(`Unknown event type: ${unknown.join(', ')}.`, [{ parameter: 'type', message: `must be among ${EVENT_TYPES.join(', ')}` }]);
  }
  return types.sort();
}

/** The workspace's domain events, for integrations catching up (the writer is ./writer.ts). */
export function createEventService(db: Kysely<Database>) {
  return {
    /** A page of events, oldest first, in the order they were committed. */
    async list(ctx: OperationContext, query: ListEventsFilters): Promise<Page<EventView>> {
      const types = typesOf(query.type);
      const createdAfter = instant(query.created_after, 'created_after');
      const filters = { list: 'events', types: types?.join(','), createdAfter };
      const page = pageRequest(query, filters, 'asc');
      const rows = await eventRepository.list(db, ctx.actor.workspaceId, { types, createdAfter }, page);
      return toPage(rows, page, filters, present, { resumable: true });
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;

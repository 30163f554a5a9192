import { Type, type Static } from 'typebox';
import { IdOf, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';
import { EVENT_TYPES } from './writer.js';

/** A domain event as the API presents it. */
export const Event = Type.Object(
  {
    id: IdOf('event'),
    object: Type.Literal('event'),
    type: Type.Enum(EVENT_TYPES),
    created_at: Timestamp,
    workspace_id: IdOf('workspace'),
    data: Type.Object({}, { additionalProperties: true, description: 'The resource as the API presents it after the change (a conversation, message, lead, AI Agent or source).' }),
  },
  { title: 'Event' },
);
export type EventView = Static<typeof Event>;

/** Query of GET /events. */
export const ListEventsQuery = Type.Object(
  {
    limit: PageQuery.limit,
    cursor: PageQuery.cursor,
    created_after: PageQuery.created_after,
    type: Type.Optional(
      Type.String({
        maxLength: 400,
        pattern: '^[a-z_]+\\.[a-z_]+(,[a-z_]+\\.[a-z_]+)*$',
        description: `Only events of these types, comma-separated: ${EVENT_TYPES.join(', ')}.`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListEventsFilters = Static<typeof ListEventsQuery>;

/** A page of events, oldest first. */
export const EventList = ListOf(Event, 'EventList');

import { Type, type Static, type TSchema } from 'typebox';
import type { LEAD_FIELDS } from '../chatbots/schema.js';
import { AtLeastOneOf, IdOf, ListOf, Metadata, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'archived'] as const;
export const LEAD_SOURCES = ['widget', 'api', 'dashboard'] as const;

const Status = Type.Enum(LEAD_STATUSES);
const Email = Type.String({ format: 'email', maxLength: 254 });
const Phone = Type.String({
  pattern: '^\\+?[0-9][0-9 ().-]{4,30}[0-9]$',
  maxLength: 32,
  description: 'Digits with optional leading +, spaces, dots, dashes and parentheses.',
});

/** A captured lead. */
export const Lead = Type.Object(
  {
    id: IdOf('lead'),
    object: Type.Literal('lead'),
    chatbot_id: Nullable(IdOf('chatbot')),
    conversation_id: Nullable(IdOf('conversation')),
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    company: Nullable(Type.String()),
    status: Status,
    source: Type.Enum(LEAD_SOURCES),
    custom_fields: Type.Record(Type.String(), Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Lead' },
);
export type LeadView = Static<typeof Lead>;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Company = Type.String({ minLength: 1, maxLength: 200 });

/**
 * What a visitor may send in the widget's lead form: every field lead capture can ask for (LEAD_FIELDS), and
 * only those (`satisfies` fails to compile when the two lists differ), with the lead's own rules.
 */
export const VisitorContactFields = {
  name: Type.Optional(Name),
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
  company: Type.Optional(Company),
} satisfies Record<(typeof LEAD_FIELDS)[number], TSchema>;

const fields = {
  name: Nullable(Name),
  email: Nullable(Email),
  phone: Nullable(Phone),
  company: Nullable(Company),
  status: Status,
  custom_fields: Metadata,
};

/** Body of POST /leads: an email or a phone is required (the schema says so; PATCH is checked by the service on the merged lead). */
export const CreateLeadBody = Type.Object(
  {
    chatbot_id: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    conversation_id: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    name: Type.Optional(fields.name),
    email: Type.Optional(fields.email),
    phone: Type.Optional(fields.phone),
    company: Type.Optional(fields.company),
    status: Type.Optional(fields.status),
    custom_fields: Type.Optional(fields.custom_fields),
  },
  {
    additionalProperties: false,
    title: 'CreateLead',
    ...AtLeastOneOf(['email', 'phone'], 'A lead needs an email or a phone number.', 'an email or a phone is required'),
  },
);
export type CreateLeadInput = Static<typeof CreateLeadBody>;

/** Body of PATCH /leads/{id}: a partial update; the lead must keep an email or a phone. */
export const UpdateLeadBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    email: Type.Optional(fields.email),
    phone: Type.Optional(fields.phone),
    company: Type.Optional(fields.company),
    status: Type.Optional(fields.status),
    custom_fields: Type.Optional(fields.custom_fields),
  },
  { additionalProperties: false, title: 'UpdateLead' },
);
export type UpdateLeadInput = Static<typeof UpdateLeadBody>;

/** Query of GET /leads. */
export const ListLeadsQuery = Type.Object(
  {
    ...PageQuery,
    chatbot_id: Type.Optional(Type.String({ maxLength: 64 })),
    conversation_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(Status),
    email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact email, case-insensitive.' })),
    updated_after: Type.Optional(Type.String({ format: 'date-time', description: 'Only leads changed after this instant (for sync).' })),
  },
  { additionalProperties: false },
);
export type ListLeadsFilters = Static<typeof ListLeadsQuery>;

/** A page of leads. */
export const LeadList = ListOf(Lead, 'LeadList');

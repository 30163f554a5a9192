import { Type, type TSchema } from 'typebox';
import { idPattern, type IdKind } from '../lib/ids.js';
import { ERROR_CODES } from './errors.js';

/** An ISO 8601 UTC timestamp with milliseconds. */
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T05:41:00.000Z'] });

/** A nullable variant of a schema. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** The id of a resource of one kind, as it appears in responses. */
export function IdOf(kind: IdKind, description?: string) {
  return Type.String({ pattern: idPattern(kind), ...(description ? { description } : {}) });
}

/** `{id}` in a path. Any string is accepted here: an id of the wrong shape is a 404, not a 400. */
export const IdParams = Type.Object({ id: Type.String({ description: 'The resource id.' }) });

/** A free key-value map (at most 50 keys, short string values). */
export const Metadata = Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), {
  maxProperties: 50,
  description: 'Free key-value pairs (at most 50 keys; keys up to 40, values up to 500 characters).',
});

/**
 * "At least one of these string fields, present and not null", stated in the schema (an `anyOf` of required
 * branches, so the OpenAPI document and generated clients carry the rule); a body that meets none gets one
 * 400 with `detail`, and `message` on each field's pointer (validation.ts). Spread into an object's options.
 */
export function AtLeastOneOf(fields: string[], detail: string, message: string) {
  return {
    anyOf: fields.map((name) => ({ required: [name], properties: { [name]: { type: 'string' } } })),
    'x-unmet': { fields, detail, message },
  };
}

/** RFC 9457 problem details, with the service's extension members. */
export const Problem = Type.Object(
  {
    type: Type.String({
      description: 'URI reference that identifies the problem type: `/docs/errors#<code>`, or `https://iana.org/assignments/http-problem-types#quota-exceeded` for 429.',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
    code: Type.String({
      description: `Stable snake_case error code, one of: ${Object.keys(ERROR_CODES).map((c) => `\`${c}\``).join(', ')} (see /docs/errors).`,
    }),
    request_id: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          pointer: Type.Optional(Type.String({ description: 'JSON pointer into the request body.' })),
          parameter: Type.Optional(Type.String({ description: 'Name of the query or path parameter.' })),
          message: Type.String(),
        }),
      ),
    ),
    required_scope: Type.Optional(Type.String({ description: 'With 403: the scope the operation requires.' })),
    // The member's name is the RateLimit header draft's (draft-ietf-httpapi-ratelimit-headers), hyphen included.
    'violated-policies': Type.Optional(
      Type.Array(Type.String(), {
        description: 'With 429: the rate-limit policies that refused the request (`key`, `workspace`, or `failed-auth`; the names used in `RateLimit-Policy`).',
      }),
    ),
  },
  { additionalProperties: true, title: 'Problem' },
);

/** Query parameters shared by every list operation. */
export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100 (default 20).' }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 512, description: 'Opaque cursor from `next_cursor` of the previous page.' }),
  ),
  created_after: Type.Optional(Type.String({ format: 'date-time', description: 'Only items created after this instant.' })),
  created_before: Type.Optional(Type.String({ format: 'date-time', description: 'Only items created before this instant.' })),
};

/** The envelope of every list response. */
export function ListOf<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      has_more: Type.Boolean(),
      next_cursor: Nullable(Type.String()),
    },
    { title },
  );
}

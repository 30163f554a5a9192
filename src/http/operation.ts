import type { TSchema } from 'typebox';
import { Type } from 'typebox';
import type { OneTimeSecret } from './idempotency.js';
import { Problem } from './schemas.js';
import type { Scope } from './scopes.js';

/** Response headers as the OpenAPI document describes them (declared once, used by every operation). */
export const HEADERS = {
  'Request-Id': { type: 'string', description: 'Identifies the request; quote it when reporting a problem.' },
  RateLimit: {
    type: 'string',
    description: 'Remaining quota per policy (IETF RateLimit header draft), e.g. `"key";r=599;t=0, "workspace";r=1790;t=0`.',
  },
  'RateLimit-Policy': {
    type: 'string',
    description: 'The quota policies that apply (IETF draft), e.g. `"key";q=600;w=60, "workspace";q=1800;w=60`.',
  },
  'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying; a request sent after that long is allowed.' },
  'WWW-Authenticate': { type: 'string', description: 'The bearer challenge (RFC 6750).' },
  ETag: {
    type: 'string',
    description: 'Version of the resource; send it back in `If-Match` to update safely, or in `If-None-Match` to read it only when it changed.',
  },
  Location: { type: 'string', description: 'URL of the created resource.' },
  Link: { type: 'string', description: 'Link to the next page (`rel="next"`), when there is one.' },
  'Idempotent-Replayed': { type: 'string', description: '`true` when this response is the stored result of an earlier request with the same Idempotency-Key.' },
  'Content-Disposition': { type: 'string', description: '`attachment` with the file\'s name: the body is a file to save.' },
} as const;

type HeaderName = keyof typeof HEADERS;

function headers(names: HeaderName[]): Record<string, (typeof HEADERS)[HeaderName]> {
  return Object.fromEntries(names.map((name) => [name, HEADERS[name]]));
}

const COMMON_HEADERS: HeaderName[] = ['Request-Id', 'RateLimit', 'RateLimit-Policy'];

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is malformed or fails validation.',
  401: 'The API key is missing, malformed, unknown, revoked or expired.',
  403: 'The API key lacks the scope this operation requires.',
  404: 'No such resource in this workspace (ids of other workspaces and malformed ids included).',
  409: 'Conflict with the current state of the resource, or the Idempotency-Key is still in use.',
  412: 'The `If-Match` header does not match the current ETag.',
  413: 'The request body is larger than 1 MiB.',
  415: 'The request body is not JSON.',
  422: 'The Idempotency-Key was used before with a different request.',
  429: 'A rate limit was exceeded: per key, per workspace, or the client address\'s budget of failed authentications (then before any key lookup).',
  500: 'Unexpected error; the body carries the request id.',
  503: 'A dependency (the database, the rate-limit store) is unavailable or too busy (`service_unavailable`), the service is shutting down, or the database has no room left for writes (`storage_full`); nothing was changed, retry after the given time.',
};

const HEADERS_BY_STATUS: Partial<Record<number, HeaderName[]>> = {
  401: ['Request-Id', 'WWW-Authenticate'],
  403: [...COMMON_HEADERS, 'WWW-Authenticate'],
  409: [...COMMON_HEADERS, 'Retry-After'],
  429: [...COMMON_HEADERS, 'Retry-After'],
  500: ['Request-Id'],
  503: ['Request-Id', 'Retry-After'],
};

function problemResponse(status: number, description?: string) {
  return {
    description: description ?? STATUS_TEXT[status] ?? 'Problem',
    headers: headers(HEADERS_BY_STATUS[status] ?? COMMON_HEADERS),
    content: { 'application/problem+json': { schema: Problem } },
  };
}

/** Everything that describes one public API operation. */
export interface OperationSpec<P, Q, B> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path under /api/v1, Fastify style (`/leads/:id`). */
  url: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  scope: Scope;
  params?: P;
  querystring?: Q;
  body?: B;
  success: {
    status: 200 | 201 | 202 | 204;
    description: string;
    /** The body's schema; absent for 204 (no body). */
    schema?: TSchema;
    /** The body is one version of a resource: sent with its `ETag` (a GET then answers 304 to a matching `If-None-Match`). */
    versioned?: boolean;
    /** The body is a page of a list: sent with `Link` when there is a next page. */
    page?: boolean;
    /** The body is not JSON but a file (sent with Content-Disposition): its schema by media type, instead of `schema`. */
    content?: Record<string, TSchema>;
    /** A field of the body holding a secret shown once: never stored for an Idempotency-Key replay (null there, with a note). */
    oneTimeSecret?: OneTimeSecret;
  };
  /** Statuses this operation adds to the common ones, with what they mean here. */
  errors?: Partial<Record<400 | 404 | 409 | 412 | 413 | 415 | 422 | 503, string>>;
}

// The request headers an operation may take (documented as header parameters).
const IDEMPOTENCY_KEY = Type.String({
  description:
    'Makes the POST safe to retry: 1 to 255 printable ASCII characters (plain or a quoted Structured-Field string). A retry with the same key within 24 hours returns the original status and body.',
});
const IF_MATCH = Type.String({
  description: 'The ETag you read (or a list of them, or `*`): the update is applied only if the resource still has it, else 412 `precondition_failed`.',
});
const IF_NONE_MATCH = Type.String({
  description: 'ETags you hold (a list, weak forms allowed, or `*`): when one is the current version, the answer is 304 without a body.',
});

/**
 * Builds the Fastify route options of an operation: the schema (validation, serialization and OpenAPI
 * at once, with every status it can answer) and the scope the auth hook enforces.
 */
export function operation<P extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined>(
  spec: OperationSpec<P, Q, B>,
) {
  const statuses = new Map<number, string | undefined>([
    [401, undefined],
    [403, undefined],
    [429, undefined],
    [500, undefined],
    // Every operation reads the database (and spends from the rate-limit store).
    [503, undefined],
  ]);
  if (spec.params || spec.querystring || spec.body) statuses.set(400, undefined);
  if (spec.params) statuses.set(404, undefined);
  if (spec.body) {
    statuses.set(413, undefined);
    statuses.set(415, undefined);
  }
  if (spec.method === 'POST') {
    statuses.set(409, 'The same Idempotency-Key is still being processed (`idempotency_key_in_use`, with `Retry-After`).');
    statuses.set(422, undefined);
  }
  if (spec.method === 'PATCH') statuses.set(412, undefined);
  for (const [status, text] of Object.entries(spec.errors ?? {})) statuses.set(Number(status), text);

  const successHeaders: HeaderName[] = [...COMMON_HEADERS];
  // Location names a created resource (201); a POST that only starts work (202) creates none.
  if (spec.method === 'POST') successHeaders.push(...(spec.success.status === 201 ? (['Location'] as const) : []), 'Idempotent-Replayed');
  if (spec.success.versioned) successHeaders.push('ETag');
  if (spec.success.page) successHeaders.push('Link');
  if (spec.success.content) successHeaders.push('Content-Disposition');
  const conditionalGet = spec.method === 'GET' && spec.success.versioned === true;

  const response: Record<number, unknown> = {
    [spec.success.status]: spec.success.content
      ? { description: spec.success.description, headers: headers(successHeaders), content: Object.fromEntries(Object.entries(spec.success.content).map(([type, schema]) => [type, { schema }])) }
      : spec.success.schema
      ? Type.Unsafe({ ...spec.success.schema, description: spec.success.description, headers: headers(successHeaders) })
      : { type: 'null', description: spec.success.description, headers: headers(successHeaders) },
  };
  // `type: null`: no body (and no `content` in the document).
  if (conditionalGet) {
    response[304] = { type: 'null', description: 'Not modified: `If-None-Match` names the current version.', headers: headers([...COMMON_HEADERS, 'ETag']) };
  }
  for (const [status, text] of [...statuses].sort(([a], [b]) => a - b)) response[status] = problemResponse(status, text);

  const requestHeaders = {
    ...(spec.method === 'POST' ? { 'idempotency-key': Type.Optional(IDEMPOTENCY_KEY) } : {}),
    ...(spec.method === 'PATCH' ? { 'if-match': Type.Optional(IF_MATCH) } : {}),
    ...(conditionalGet ? { 'if-none-match': Type.Optional(IF_NONE_MATCH) } : {}),
  };

  return {
    schema: {
      operationId: spec.operationId,
      summary: spec.summary,
      description: `${spec.description}\n\nRequired scope: \`${spec.scope}\`.`,
      tags: [spec.tag],
      security: [{ bearerAuth: [] }],
      'x-required-scopes': [spec.scope],
      ...(spec.params ? { params: spec.params as Exclude<P, undefined> } : {}),
      // Operations without query parameters still refuse unknown ones (400 naming the parameter).
      querystring: spec.querystring ?? Type.Object({}, { additionalProperties: false }),
      ...(spec.body ? { body: spec.body as Exclude<B, undefined> } : {}),
      ...(Object.keys(requestHeaders).length > 0 ? { headers: Type.Object(requestHeaders) } : {}),
      response,
    },
    config: { scope: spec.scope, ...(spec.success.oneTimeSecret ? { oneTimeSecret: spec.success.oneTimeSecret } : {}) },
  } as unknown as {
    schema: { params: Exclude<P, undefined>; querystring: Exclude<Q, undefined>; body: Exclude<B, undefined>; response: Record<number, unknown> };
    config: { scope: Scope; oneTimeSecret?: OneTimeSecret };
  };
}

import { Type, type TSchema } from 'typebox';
import { SMALL_BODY_LIMIT_BYTES } from '../../http/json-body.js';
import { HEADERS } from '../../http/operation.js';
import { Problem } from '../../http/schemas.js';
import type { WidgetRouteConfig } from './widget-access.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is malformed or fails validation.',
  401: 'The visitor token is missing or not recognised (`invalid_visitor_token`).',
  403: 'The page\'s Origin is not in the AI Agent\'s `allowed_origins` (`origin_not_allowed`).',
  404: 'No such AI Agent or conversation (or the token belongs to another conversation).',
  409: 'The AI Agent is not active (`chatbot_not_active`) or the conversation is closed (`conversation_closed`).',
  413: 'The request body is larger than the operation accepts (16 KiB; 64 KiB for a message).',
  415: 'The request body is not JSON.',
  429: 'Too many requests from this IP address, or too many messages in this conversation; see Retry-After.',
  500: 'Unexpected error; the body carries the request id.',
};

function problem(status: number, description?: string) {
  const headers = status === 429 ? { 'Retry-After': HEADERS['Retry-After'] } : status === 401 ? { 'WWW-Authenticate': HEADERS['WWW-Authenticate'] } : {};
  return { description: description ?? STATUS_TEXT[status], headers: { 'Request-Id': HEADERS['Request-Id'], ...headers }, content: { 'application/problem+json': { schema: Problem } } };
}

/** Everything that describes one public widget operation (OpenAPI tag `Widget`). */
export interface WidgetOperationSpec<P, Q, B> {
  operationId: string;
  summary: string;
  description: string;
  access: WidgetRouteConfig;
  params: P;
  querystring?: Q;
  body?: B;
  /** `mediaType`: when the answer is not JSON (the event stream). */
  success: { status: 200 | 201; description: string; schema: TSchema; mediaType?: string };
  /** Extra success representations (the SSE stream), by status and media type. */
  alternatives?: Record<number, { description: string; mediaType: string; schema: TSchema }>;
  errors: number[];
  /** Largest body accepted; by default SMALL_BODY_LIMIT_BYTES, as widget bodies are a few short fields. */
  bodyLimit?: number;
}

/** Route options of a widget operation: the schema (validation, serialization, OpenAPI) and its access rules. */
export function widgetOperation<P extends TSchema, Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined>(spec: WidgetOperationSpec<P, Q, B>) {
  const { success } = spec;
  const response: Record<number, unknown> = {
    [success.status]: success.mediaType
      ? { description: success.description, content: { [success.mediaType]: { schema: success.schema } } }
      : Type.Unsafe({ ...success.schema, description: success.description }),
  };
  for (const [status, alternative] of Object.entries(spec.alternatives ?? {})) {
    response[Number(status)] = { description: alternative.description, content: { [alternative.mediaType]: { schema: alternative.schema } } };
  }
  for (const status of [...new Set([...spec.errors, 429, 500])].sort((a, b) => a - b)) response[status] = problem(status);
  return {
    schema: {
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.description,
      tags: ['Widget'],
      security: spec.access.resource === 'conversation' ? [{ visitorToken: [] }] : [],
      params: spec.params,
      querystring: spec.querystring ?? Type.Object({}, { additionalProperties: false }),
      ...(spec.body ? { body: spec.body } : {}),
      response,
    },
    config: { widget: spec.access },
    bodyLimit: spec.bodyLimit ?? SMALL_BODY_LIMIT_BYTES,
  } as unknown as {
    schema: { params: P; querystring: Exclude<Q, undefined>; body: Exclude<B, undefined>; response: Record<number, unknown> };
    config: { widget: WidgetRouteConfig };
    bodyLimit: number;
  };
}

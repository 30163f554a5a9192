import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { SCOPES } from './scopes.js';

const VISITOR_TOKEN_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'vtk_…',
  description: 'The `visitor_token` returned when the conversation was started.',
} as const;

/** The `info` and top-level parts of the OpenAPI document. */
const DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'Workspace Chat-Agent API',
    version: '1.0.0',
    summary: 'AI Agents, conversations, leads and analytics of a workspace.',
    description: [
      'The public API of the workspace chat-agent service. Every operation authenticates with a workspace API key sent as',
      '`Authorization: Bearer <API_KEY>` and requires the scope named in its description and in `x-required-scopes`',
      `(scopes: ${SCOPES.map((s) => `\`${s}\``).join(', ')}). A key without the scope gets 403, never an empty result.`,
      '',
      'Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code` and the `request_id`.',
      'Lists use cursor pagination (`limit` 1–100, `cursor` from `next_cursor`, newest first).',
      'Every POST accepts an `Idempotency-Key`: a retry with the same key within 24 hours returns the original status and body.',
      'Rate limits apply per key and per workspace; every response carries `RateLimit-Policy` and `RateLimit`, and a 429 carries `Retry-After`.',
    ].join('\n'),
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  },
  servers: [{ url: '/api/v1', description: 'This service' }],
  tags: [
    { name: 'Analytics', description: 'Workspace analytics summary.' },
    { name: 'AI Agents', description: 'AI Agents (`chatbots`): draft → active ⇄ paused → archived.' },
    { name: 'Conversations', description: 'Conversations from every channel and their messages.' },
    { name: 'Leads', description: 'Captured leads.' },
    { name: 'Knowledge sources', description: 'What an AI Agent learns from (websites, files, text, Q&A), ingested by jobs; and test retrieval.' },
  ],
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'wsk_…',
        description: 'A workspace API key, created in Settings → Developers or with `npm run cli -- key create`.',
      },
      // Used by the widget operations only; moved to the widget document (see transformObject below).
      visitorToken: VISITOR_TOKEN_SCHEME,
    },
  },
  security: [{ bearerAuth: [] }],
} as const;

const WIDGET_PREFIX = '/widget/v1';

/** The document of the public chat endpoints (/widget/v1/openapi), split from the generated one. */
type OpenApiObject = { paths?: Record<string, unknown>; components?: Record<string, unknown>; [key: string]: unknown };
const widgetDocuments = new WeakMap<FastifyInstance, OpenApiObject>();

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Moves every named shape (a schema with a `title`: Problem, Chatbot, ChatbotList, CreateLead…) of these
 * paths into `components.schemas` and puts a `$ref` where it was, so each shape is written once and
 * generated clients name it once. The route schemas stay whole for validation and serialization; only
 * the document is rewritten. A response's schema loses the copy of the response's description it carries.
 */
function withSharedSchemas(paths: Record<string, unknown>): { paths: Record<string, unknown>; schemas: Json } {
  const schemas: Json = {};
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, child] of Object.entries(node)) out[key] = hoist(child);
    if (typeof out.title !== 'string' || out.$ref !== undefined) return out;
    const { description, ...shape } = out;
    const known = schemas[out.title];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(shape)) {
      throw new Error(`two different schemas are titled "${out.title}": give one another title`);
    }
    schemas[out.title] = shape;
    const ref = `#/components/schemas/${out.title}`;
    return description === undefined ? { $ref: ref } : { $ref: ref, description };
  };
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(isObject(item) ? item : {})) {
      for (const response of Object.values(isObject(operation) && isObject(operation.responses) ? operation.responses : {})) {
        if (!isObject(response) || !isObject(response.content)) continue;
        for (const media of Object.values(response.content)) {
          if (isObject(media) && isObject(media.schema) && media.schema.description === response.description) delete media.schema.description;
        }
      }
    }
  }
  const rewritten = hoist(paths) as Record<string, unknown>;
  return { paths: rewritten, schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) };
}

function widgetDocumentFrom(full: OpenApiObject, paths: Record<string, unknown>): OpenApiObject {
  const shared = withSharedSchemas(paths);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Workspace Chat-Agent Widget API',
      version: '1.0.0',
      summary: 'The public chat endpoints the widget and the hosted chat page use.',
      description: [
        'Public endpoints for browsers. Starting a conversation needs no credentials; every other call sends the conversation\'s',
        '`visitor_token` as `Authorization: Bearer <visitor_token>` (a token opens only its own conversation).',
        'CORS follows the AI Agent\'s `allowed_origins` (`*` for any; an empty list allows only the service\'s own hosted page).',
        'Rate limits apply per client IP and per conversation; a 429 carries `Retry-After`. Errors are RFC 9457 problem details.',
      ].join('\n'),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: WIDGET_PREFIX, description: 'This service' }],
    tags: [{ name: 'Widget', description: 'Public chat endpoints (visitor token).' }],
    paths: shared.paths,
    components: {
      ...(full.components ?? {}),
      schemas: shared.schemas,
      securitySchemes: { visitorToken: VISITOR_TOKEN_SCHEME },
    },
  };
}

/**
 * Registers @fastify/swagger so the documents are generated from the same route schemas that validate and
 * serialize: /api/v1 operations (routes that declare a scope) make the API document, whose paths are
 * relative to its server URL; widget operations (tag `Widget`) are split off into their own document.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: DOCUMENT as never,
    hideUntagged: true,
    transform: ({ schema, url, route }) => {
      const config = (route.config ?? {}) as { scope?: string; widget?: { preflight?: boolean } };
      const widget = Boolean(config.widget && !config.widget.preflight && url.startsWith(WIDGET_PREFIX));
      const hide = !config.scope && !widget;
      return { schema: hide ? { ...schema, hide: true } : schema, url: widget ? url : url.replace(/^\/api\/v1/, '') };
    },
    transformObject: (documentObject) => {
      const full = (documentObject as unknown as { openapiObject: OpenApiObject }).openapiObject;
      const apiPaths: Record<string, unknown> = {};
      const widgetPaths: Record<string, unknown> = {};
      for (const [path, item] of Object.entries(full.paths ?? {})) {
        if (path.startsWith(WIDGET_PREFIX)) widgetPaths[path.slice(WIDGET_PREFIX.length)] = item;
        else apiPaths[path] = item;
      }
      widgetDocuments.set(app, widgetDocumentFrom(full, widgetPaths));
      const components = (full.components ?? {}) as { securitySchemes?: Record<string, unknown> };
      const { visitorToken: _widgetOnly, ...securitySchemes } = components.securitySchemes ?? {};
      const shared = withSharedSchemas(apiPaths);
      return { ...full, paths: shared.paths, components: { ...components, schemas: shared.schemas, securitySchemes } } as never;
    },
  });
}

/** The OpenAPI document of /widget/v1 (generated with the API's, from the same route schemas). */
export function widgetDocument(app: FastifyInstance): OpenApiObject {
  app.swagger();
  const document = widgetDocuments.get(app);
  if (!document) throw new Error('the widget OpenAPI document is not generated yet');
  return document;
}

import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { SCOPES } from './scopes.js';

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
  ],
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'wsk_…',
        description: 'A workspace API key, created in Settings → Developers or with `npm run cli -- key create`.',
      },
    },
  },
  security: [{ bearerAuth: [] }],
} as const;

/**
 * Registers @fastify/swagger so the document is generated from the same route schemas that validate and
 * serialize. Only /api/v1 operations (routes that declare a scope) appear; paths are relative to the server URL.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: DOCUMENT as never,
    hideUntagged: true,
    transform: ({ schema, url, route }) => {
      const hide = !route.config || !(route.config as { scope?: string }).scope;
      return { schema: hide ? { ...schema, hide: true } : schema, url: url.replace(/^\/api\/v1/, '') };
    },
  });
}

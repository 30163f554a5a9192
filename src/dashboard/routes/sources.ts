import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { IdParams } from '../../http/schemas.js';
import {
  CreateSourceBody,
  KnowledgeSearchQuery,
  KnowledgeSearchResult,
  ListDocumentsQuery,
  ListSourcesQuery,
  Source,
  SourceDocumentList,
  SourceList,
  SourceParams,
  type CreateSourceJsonInput,
} from '../../modules/sources/schema.js';
import { readUpload, registerUploads, uploadOf } from '../../modules/sources/upload.js';
import type { Services } from '../../services.js';
import { dashboardContext } from '../session.js';

/**
 * Knowledge sources in the agent editor: the /api/v1 source service and schemas, with the user as actor.
 * The upload is read in preValidation, after the session hook (onRequest) has checked the CSRF token, so
 * a forged multipart request is refused before its body is read.
 */
export function sourceRoutes(services: Services, options: { maxFileBytes: number }): FastifyPluginAsyncTypebox {
  const { sources } = services;
  return async (app) => {
    // multipart/form-data is accepted by this one plugin (the create route) only; every other route stays JSON.
    await app.register(async (scope) => {
      await registerUploads(scope, options.maxFileBytes);
      const uploadScope = scope.withTypeProvider<TypeBoxTypeProvider>();
      const limits = {
        maxFileBytes: options.maxFileBytes,
        admit: (request: FastifyRequest, fileBytes: number) => sources.admitUpload(dashboardContext(request), (request.params as { id: string }).id, fileBytes),
      };
      uploadScope.post(
        '/chatbots/:id/sources',
        { schema: { params: IdParams, body: CreateSourceBody, response: { 201: Source } }, preValidation: async (request) => readUpload(request, limits) },
        async (request, reply) => {
          const input = uploadOf(request) ?? (request.body as CreateSourceJsonInput);
          return reply.code(201).send(await sources.create(dashboardContext(request), request.params.id, input));
        },
      );
    });

    app.get('/chatbots/:id/sources', { schema: { params: IdParams, querystring: ListSourcesQuery, response: { 200: SourceList } } }, async (request) =>
      sources.list(dashboardContext(request), request.params.id, request.query),
    );

    app.get('/chatbots/:id/sources/:source_id', { schema: { params: SourceParams, response: { 200: Source } } }, async (request) =>
      sources.get(dashboardContext(request), request.params.id, request.params.source_id),
    );

    app.delete('/chatbots/:id/sources/:source_id', { schema: { params: SourceParams } }, async (request, reply) => {
      await sources.remove(dashboardContext(request), request.params.id, request.params.source_id);
      return reply.code(204).send();
    });

    app.post('/chatbots/:id/sources/:source_id/sync', { schema: { params: SourceParams, response: { 202: Source } } }, async (request, reply) =>
      reply.code(202).send(await sources.sync(dashboardContext(request), request.params.id, request.params.source_id)),
    );

    app.get('/chatbots/:id/sources/:source_id/documents', { schema: { params: SourceParams, querystring: ListDocumentsQuery, response: { 200: SourceDocumentList } } }, async (request) =>
      sources.documents(dashboardContext(request), request.params.id, request.params.source_id, request.query),
    );

    app.get('/chatbots/:id/knowledge/search', { schema: { params: IdParams, querystring: KnowledgeSearchQuery, response: { 200: KnowledgeSearchResult } } }, async (request) =>
      sources.search(dashboardContext(request), request.params.id, request.query.q, request.query.limit ?? 5),
    );
  };
}

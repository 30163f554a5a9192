import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
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
} from './schema.js';
import type { SourceService } from './service.js';
import { readUpload, registerUploads, uploadOf } from './upload.js';

const TAG = 'Knowledge sources';

/** /chatbots/{id}/sources and /chatbots/{id}/knowledge/search: an agent's knowledge sources and retrieval. */
export function sourceRoutes(sources: SourceService, options: { maxFileBytes: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    // multipart/form-data is accepted by this one plugin (the upload route) only; every other route stays JSON.
    await app.register(async (scope) => {
      await registerUploads(scope, options.maxFileBytes);
      const uploadScope = scope.withTypeProvider<TypeBoxTypeProvider>();
      const limits = {
        maxFileBytes: options.maxFileBytes,
        admit: (request: FastifyRequest, fileBytes: number) => sources.admitUpload(apiContext(request), (request.params as { id: string }).id, fileBytes),
      };
      uploadScope.post(
        '/chatbots/:id/sources',
        {
          ...operation({
            method: 'POST',
            url: '/chatbots/{id}/sources',
            operationId: 'createSource',
            summary: 'Add a knowledge source',
            description:
              'Adds a source the AI Agent learns from. JSON: a `website` (crawled within `crawl` limits, robots.txt honoured), ' +
              'a `text` or a `qa` pair; `multipart/form-data` with the field `file` (PDF, DOCX, Markdown, plain text or HTML; ' +
              'optional `title`) for a file. Text and Q&A sources are ready at once; websites and files are `queued` for ' +
              'ingestion and move to `syncing`, then `ready` (or `failed`).',
            tag: TAG,
            scope: 'chatbots:write',
            params: IdParams,
            body: CreateSourceBody,
            success: { status: 201, description: 'The new source.', schema: Source },
            errors: {
              409:
                'The AI Agent is archived (`chatbot_archived`); the workspace is at its quota (`quota_exceeded`: `quota` is `sources` ' +
                '(SOURCE_MAX_PER_WORKSPACE, 500 by default, every agent\'s sources together) or `total_bytes` (SOURCE_MAX_TOTAL_MB of stored ' +
                'files, 1,000 MB by default), with `limit`, `used` and, for a file, `requested_bytes`; a file is judged from Content-Length ' +
                'before it is read, counting the uploads still being received); or the same Idempotency-Key is still being processed (`idempotency_key_in_use`).',
              413: 'The JSON body is larger than 1 MiB, or the file larger than SOURCE_MAX_FILE_MB (20 MB by default).',
              415: 'The body is neither JSON nor multipart/form-data, or the file is not a PDF, DOCX, Markdown, plain text or HTML file.',
            },
          }),
          preValidation: async (request) => readUpload(request, limits),
        },
        async (request, reply) => {
          const upload = uploadOf(request);
          const input = upload ?? (request.body as CreateSourceJsonInput);
          const source = await sources.create(apiContext(request), request.params.id, input);
          return reply.created(`/api/v1/chatbots/${source.chatbot_id}/sources/${source.id}`).send(source);
        },
      );
    });

    app.get(
      '/chatbots/:id/sources',
      operation({
        method: 'GET',
        url: '/chatbots/{id}/sources',
        operationId: 'listSources',
        summary: 'List knowledge sources',
        description: 'Lists the AI Agent\'s sources, newest first, with their status and counts.',
        tag: TAG,
        scope: 'chatbots:read',
        params: IdParams,
        querystring: ListSourcesQuery,
        success: { status: 200, description: 'A page of sources.', schema: SourceList, page: true },
      }),
      async (request, reply) => reply.links(await sources.list(apiContext(request), request.params.id, request.query)),
    );

    app.get(
      '/chatbots/:id/sources/:source_id',
      operation({
        method: 'GET',
        url: '/chatbots/{id}/sources/{source_id}',
        operationId: 'getSource',
        summary: 'Get a knowledge source',
        description: 'Returns one source; while it syncs, `stats` grow as documents are done.',
        tag: TAG,
        scope: 'chatbots:read',
        params: SourceParams,
        success: { status: 200, description: 'The source.', schema: Source },
      }),
      async (request) => sources.get(apiContext(request), request.params.id, request.params.source_id),
    );

    app.delete(
      '/chatbots/:id/sources/:source_id',
      operation({
        method: 'DELETE',
        url: '/chatbots/{id}/sources/{source_id}',
        operationId: 'deleteSource',
        summary: 'Delete a knowledge source',
        description: 'Removes the source, its documents and its chunks; they leave retrieval in the same transaction.',
        tag: TAG,
        scope: 'chatbots:write',
        params: SourceParams,
        success: { status: 204, description: 'Deleted.' },
      }),
      async (request, reply) => {
        await sources.remove(apiContext(request), request.params.id, request.params.source_id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/chatbots/:id/sources/:source_id/sync',
      operation({
        method: 'POST',
        url: '/chatbots/{id}/sources/{source_id}/sync',
        operationId: 'syncSource',
        summary: 'Re-sync a knowledge source now',
        description: 'Queues an ingestion of the source (none is added while one waits or runs). Documents whose content did not change are skipped.',
        tag: TAG,
        scope: 'chatbots:write',
        params: SourceParams,
        success: { status: 202, description: 'The source, queued.', schema: Source },
      }),
      async (request, reply) => reply.code(202).send(await sources.sync(apiContext(request), request.params.id, request.params.source_id)),
    );

    app.get(
      '/chatbots/:id/sources/:source_id/documents',
      operation({
        method: 'GET',
        url: '/chatbots/{id}/sources/{source_id}/documents',
        operationId: 'listSourceDocuments',
        summary: 'List the documents of a source',
        description: 'The pages (website) or the file of a source, in the order they were found, each with its status and error.',
        tag: TAG,
        scope: 'chatbots:read',
        params: SourceParams,
        querystring: ListDocumentsQuery,
        success: { status: 200, description: 'A page of documents.', schema: SourceDocumentList, page: true },
      }),
      async (request, reply) => reply.links(await sources.documents(apiContext(request), request.params.id, request.params.source_id, request.query)),
    );

    app.get(
      '/chatbots/:id/knowledge/search',
      operation({
        method: 'GET',
        url: '/chatbots/{id}/knowledge/search',
        operationId: 'searchKnowledge',
        summary: 'Test retrieval',
        description: 'What the AI Agent would retrieve for a question, best first: the chunks, with their source, document, relative `score` and absolute `confidence`.',
        tag: TAG,
        scope: 'chatbots:read',
        params: IdParams,
        querystring: KnowledgeSearchQuery,
        success: { status: 200, description: 'The retrieved chunks.', schema: KnowledgeSearchResult },
      }),
      async (request) => sources.search(apiContext(request), request.params.id, request.query.q, request.query.limit ?? 5),
    );
  };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { IdParams } from '../../http/schemas.js';
import { CreateLeadBody, ListLeadsQuery, UpdateLeadBody, type LeadView } from '../../modules/leads/schema.js';
import type { Services } from '../../services.js';
import { csvRow } from '../../lib/csv.js';
import { dashboardContext } from '../session.js';

const DashboardLeadsQuery = Type.Object(
  { ...ListLeadsQuery.properties, search: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

const CSV_COLUMNS = ['id', 'name', 'email', 'phone', 'company', 'status', 'source', 'chatbot_id', 'conversation_id', 'created_at', 'updated_at'] as const;
const EXPORT_MAX = 50_000;

/** Leads: a filtered, searchable table; create and edit (source `dashboard`); CSV export. */
export function leadRoutes(services: Services): FastifyPluginAsyncTypebox {
  const { leads } = services;
  return async (app) => {
    app.get('/leads', { schema: { querystring: DashboardLeadsQuery } }, async (request) => leads.list(dashboardContext(request), request.query));

    app.post('/leads', { schema: { body: CreateLeadBody } }, async (request, reply) =>
      reply.code(201).send((await leads.create(dashboardContext(request), request.body, 'dashboard')).lead),
    );

    app.get('/leads/:id', { schema: { params: IdParams } }, async (request) => (await leads.get(dashboardContext(request), request.params.id)).lead);

    app.patch('/leads/:id', { schema: { params: IdParams, body: UpdateLeadBody } }, async (request) =>
      (await leads.update(dashboardContext(request), request.params.id, request.body, request.headers['if-match'])).lead,
    );

    // The filters of the table apply; pages are walked with the list's own cursor.
    app.get('/leads/export', { schema: { querystring: DashboardLeadsQuery } }, async (request, reply) => {
      const ctx = dashboardContext(request);
      const lines = [csvRow([...CSV_COLUMNS, 'custom_fields'])];
      let cursor: string | undefined;
      let count = 0;
      do {
        const page = await leads.list(ctx, { ...request.query, limit: 100, ...(cursor ? { cursor } : {}) });
        for (const lead of page.data) {
          lines.push(csvRow([...CSV_COLUMNS.map((c) => (lead as LeadView)[c]), JSON.stringify(lead.custom_fields)]));
        }
        count += page.data.length;
        cursor = page.next_cursor ?? undefined;
      } while (cursor && count < EXPORT_MAX);
      return reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', 'attachment; filename="leads.csv"')
        .send(`${lines.join('\r\n')}\r\n`);
    });
  };
}

import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { instant } from '../../http/filters.js';
import type { AuditEventView } from '../../modules/audit/service.js';
import type { Services } from '../../services.js';
import { csvRow } from '../../lib/csv.js';
import { AuditExportQuery, AuditQuery } from '../schemas.js';
import { dashboardContext } from '../session.js';

const CSV_COLUMNS = ['seq', 'occurred_at', 'action', 'actor_type', 'actor_id', 'actor_name', 'target_type', 'target_id', 'changes', 'request_id', 'idempotency_key', 'ip', 'user_agent', 'hash'];

function csvLine(event: AuditEventView): string {
  return csvRow([
    event.seq, event.occurred_at, event.action, event.actor.type, event.actor.id, event.actor.name, event.target.type, event.target.id,
    JSON.stringify(event.changes), event.request_id, event.idempotency_key, event.ip, event.user_agent, event.hash,
  ]);
}

/** Settings → Audit log (admins and owners): filtered events, CSV / JSON Lines export, chain verification. */
export function auditRoutes(services: Services): FastifyPluginAsyncTypebox {
  const { audit } = services;
  const config = { minRole: 'admin' as const };
  return async (app) => {
    app.get('/audit', { schema: { querystring: AuditQuery }, config }, async (request) => {
      const { actor, action, from, to, before_seq: beforeSeq, limit = 50 } = request.query;
      const events = await audit.search(
        dashboardContext(request).actor.workspaceId,
        { actor: actor?.trim() || undefined, action: action?.trim() || undefined, occurredAfter: instant(from, 'from'), occurredBefore: instant(to, 'to'), beforeSeq },
        limit + 1,
      );
      const data = events.slice(0, limit);
      return { object: 'list', data, has_more: events.length > limit, next_before_seq: events.length > limit ? data[data.length - 1]!.seq : null };
    });

    app.get('/audit/verify', { config }, async (request) => audit.verify(dashboardContext(request).actor.workspaceId));

    // The whole chain in order, streamed line by line so a long log never sits in memory.
    app.get('/audit/export', { schema: { querystring: AuditExportQuery }, config }, async (request, reply) => {
      const workspaceId = dashboardContext(request).actor.workspaceId;
      const csv = request.query.format === 'csv';
      async function* lines() {
        if (csv) yield `${csvRow(CSV_COLUMNS)}\r\n`;
        for await (const event of audit.export(workspaceId)) yield csv ? `${csvLine(event)}\r\n` : `${JSON.stringify(event)}\n`;
      }
      return reply
        .type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="audit-log.${csv ? 'csv' : 'jsonl'}"`)
        .send(Readable.from(lines()));
    });
  };
}

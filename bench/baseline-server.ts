import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { openDatabase, prepareDatabase } from '../src/db/database.js';
import type { OperationContext } from '../src/lib/actor.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { createAuditWriter, diffChanges } from '../src/modules/audit/writer.js';
import { chatbotRepository } from '../src/modules/chatbots/repository.js';
import { presentLead } from '../src/modules/leads/presenter.js';
import { leadRepository, type LeadRow } from '../src/modules/leads/repository.js';
import { AUDITED_LEAD_FIELDS } from '../src/modules/leads/service.js';
import { dayOf, statsRepository } from '../src/modules/stats/repository.js';

// The two ceilings the benchmark compares against, in a process of their own:
// - GET /bare: a bare Fastify server answering a small JSON object (what Node HTTP does here);
// - GET /bare-work/{us}: the bare route plus `us` microseconds of synchronous work (busy waiting), the
//   calibration that shows how much work per request a throughput target leaves on this machine;
// - GET /bare-read/{workspace}/{id} and GET /bare-list/{workspace}: the service's own data access (its
//   repositories, on the service's database) for an agent by id and the first page of 20 leads, answered
//   as they come from the database: what the reads cost without authentication, limits, presentation or
//   logging;
// - GET /bare-refusal: a 401 problem of the same size and headers as the service's answer to an invalid key,
//   with the request's log line written by pino (a child logger per request, as Fastify makes one), and
//   nothing else: what a logged refusal costs at the least;
// - POST /bare-write: the same database transaction as a lead creation with its audit row (the lead, the
//   day's counter, the audit event linked into the workspace's chain), through the service's own
//   repositories, and nothing else: what a durable lead creation costs here;
// - POST /bare-write-two-inserts: the lead and an audit row alone, a reference (the earlier baseline).
const config = loadConfig();
const { handle } = await prepareDatabase(config.database);
const db = handle.db;
const serviceDatabase = openDatabase(loadConfig({ DATABASE_URL: process.env.SERVICE_DATABASE_URL!, DATABASE_SCHEMA: process.env.SERVICE_DATABASE_SCHEMA ?? '' }).database);
const workspaceId = newId('workspace');
const twoInsertsWorkspaceId = newId('workspace');
for (const id of [workspaceId, twoInsertsWorkspaceId]) {
  await db.insertInto('workspaces').values({ id, name: 'baseline', created_at: new Date().toISOString() }).execute();
}
const audit = createAuditWriter(systemClock);
let writes = 0;

let sequence = 0;
const app = Fastify({ logger: false });
app.get('/bare', async () => ({ object: 'ping', ok: true, id: 'bot_01JD000000000000000000000' }));
app.get('/bare-work/:us', async (request) => {
  const until = process.hrtime.bigint() + BigInt(Number((request.params as { us: string }).us) * 1000);
  while (process.hrtime.bigint() < until);
  return { object: 'ping', ok: true, id: 'bot_01JD000000000000000000000' };
});
app.get('/bare-read/:workspace/:id', async (request) => {
  const { workspace, id } = request.params as { workspace: string; id: string };
  return (await chatbotRepository.find(serviceDatabase.db, workspace, id)) ?? null;
});
app.get('/bare-list/:workspace', async (request) => {
  const { workspace } = request.params as { workspace: string };
  return leadRepository.list(serviceDatabase.db, workspace, {}, { limit: 20, after: null, order: 'desc' });
});
// The service's log line format and destination (stdout, which the benchmark discards as it does the service's).
const accessLog = pino({ level: 'info', base: { service: 'baseline' }, timestamp: pino.stdTimeFunctions.isoTime });
const challenge =
  'Bearer realm="api", error="invalid_token", error_description="The API key is malformed: expected a key of the form wsk_... as created in Settings > Developers or by the CLI."';
let refusals = 0;
app.get('/bare-refusal', (request, reply) => {
  const started = performance.now();
  const requestId = `req_${(refusals += 1)}`;
  const problem = {
    type: '/docs/errors#invalid_api_key', title: 'Invalid API key', status: 401, code: 'invalid_api_key', instance: request.url, request_id: requestId,
    detail: 'The API key is malformed: expected a key of the form wsk_... as created in Settings > Developers or by the CLI.',
  };
  reply.code(401).header('Request-Id', requestId).header('WWW-Authenticate', challenge).type('application/problem+json').send(JSON.stringify(problem));
  accessLog.child({ request_id: requestId }).info(
    { method: request.method, url: request.url, status: 401, response_time_ms: Math.round((performance.now() - started) * 10) / 10 },
    'request completed',
  );
});
// The lead creation's own transaction, through the service's repositories and audit writer (the same
// statements, compiled once, as the service runs them): the lead, the day's counter, and the audit event
// linked into the workspace's hash chain (head, event, new head).
app.post('/bare-write', async (request, reply) => {
  const body = request.body as { email?: string; name?: string };
  const now = new Date();
  const at = now.toISOString();
  const row: LeadRow = {
    id: newId('lead', now.getTime()), workspace_id: workspaceId, chatbot_id: null, conversation_id: null, name: body.name ?? null, email: body.email ?? null,
    phone: null, company: null, status: 'new', source: 'api', custom_fields: '{}', created_at: at, updated_at: at,
  };
  // The audit event of an API write: the key as actor, the request's facts.
  const ctx: OperationContext = {
    actor: { type: 'api_key', id: 'key_01JD0000000000000000000000', name: 'bench', workspaceId },
    request: { requestId: `req_${(writes += 1)}`, ip: request.ip, userAgent: request.headers['user-agent'] ?? null },
  };
  await db.transaction().execute(async (trx) => {
    await leadRepository.insert(trx, row);
    await statsRepository.bump(trx, workspaceId, dayOf(at), null, { leads: 1 });
    const changes = diffChanges(null, presentLead(row), AUDITED_LEAD_FIELDS);
    await audit.record(trx, ctx, { action: 'lead.created', target: { type: 'lead', id: row.id }, changes });
  });
  return reply.code(201).send({ id: row.id, object: 'lead', email: row.email, created_at: at });
});
// The two inserts alone (the lead and an audit row, built with Kysely per request): a reference, the
// baseline of the runs before 2026-11-24 evening.
app.post('/bare-write-two-inserts', async (request, reply) => {
  const body = request.body as { email?: string };
  const at = new Date().toISOString();
  const id = newId('lead');
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('leads')
      .values({ id, workspace_id: twoInsertsWorkspaceId, chatbot_id: null, conversation_id: null, name: null, email: body.email ?? null, phone: null, company: null, status: 'new', source: 'api', custom_fields: '{}', created_at: at, updated_at: at })
      .execute();
    await trx
      .insertInto('audit_events')
      .values({
        id: newId('auditEvent'), workspace_id: twoInsertsWorkspaceId, seq: (sequence += 1), occurred_at: at, action: 'lead.created',
        actor_type: 'api_key', actor_id: 'key_x', actor_name: 'bench', target_type: 'lead', target_id: id, changes: JSON.stringify({ email: { before: null, after: body.email } }),
        request_id: null, idempotency_key: null, ip: null, user_agent: null, prev_hash: '', hash: createHash('sha256').update(id).digest('hex'),
      })
      .execute();
  });
  return reply.code(201).send({ id, object: 'lead', email: body.email ?? null, created_at: at });
});
await app.listen({ port: config.port, host: '127.0.0.1' });
process.on('SIGTERM', () => {
  void app.close().then(() => Promise.all([handle.close(), serviceDatabase.close()])).then(() => process.exit(0));
});

import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import { openDatabase, prepareDatabase } from '../src/db/database.js';
import { newId } from '../src/lib/ids.js';
import { chatbotRepository } from '../src/modules/chatbots/repository.js';
import { leadRepository } from '../src/modules/leads/repository.js';

// The two ceilings the benchmark compares against, in a process of their own:
// - GET /bare: a bare Fastify server answering a small JSON object (what Node HTTP does here);
// - GET /bare-work/{us}: the bare route plus `us` microseconds of synchronous work (busy waiting), the
//   calibration that shows how much work per request a throughput target leaves on this machine;
// - GET /bare-read/{workspace}/{id} and GET /bare-list/{workspace}: the service's own data access (its
//   repositories, on the service's database) for an agent by id and the first page of 20 leads, answered
//   as they come from the database: what the reads cost without authentication, limits, presentation or
//   logging;
// - POST /bare-write: the same database transaction as a lead creation with its audit row, and nothing
//   else (what a durable write costs here).
const config = loadConfig();
const { handle } = await prepareDatabase(config.database);
const db = handle.db;
const serviceDatabase = openDatabase(loadConfig({ DATABASE_URL: process.env.SERVICE_DATABASE_URL!, DATABASE_SCHEMA: process.env.SERVICE_DATABASE_SCHEMA ?? '' }).database);
const workspaceId = newId('workspace');
await db.insertInto('workspaces').values({ id: workspaceId, name: 'baseline', created_at: new Date().toISOString() }).execute();

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
app.post('/bare-write', async (request, reply) => {
  const body = request.body as { email?: string };
  const at = new Date().toISOString();
  const id = newId('lead');
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('leads')
      .values({ id, workspace_id: workspaceId, chatbot_id: null, conversation_id: null, name: null, email: body.email ?? null, phone: null, company: null, status: 'new', source: 'api', custom_fields: '{}', created_at: at, updated_at: at })
      .execute();
    await trx
      .insertInto('audit_events')
      .values({
        id: newId('auditEvent'), workspace_id: workspaceId, seq: (sequence += 1), occurred_at: at, action: 'lead.created',
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

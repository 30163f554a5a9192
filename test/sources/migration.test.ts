import { Migrator, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { ensureSchema, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { isPostgres } from '../../src/db/dialect.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Database } from '../../src/db/schema.js';
import { systemContext } from '../../src/lib/actor.js';
import { newId } from '../../src/lib/ids.js';
import { testConfig } from '../helpers/app.js';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';

const WS = newId('workspace');
const BOT = newId('chatbot');
const HOURS = { title: 'Opening hours', content: 'We are open Monday to Friday, 9am to 5pm.' };
const PARKING = { title: 'Address and parking', content: 'Free parking behind the shop on Harbour Street.' };

async function indexNames(db: Kysely<Database>): Promise<string[]> {
  const rows = isPostgres(db)
    ? (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'reply_jobs' and schemaname = current_schema()`.execute(db)).rows
    : (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'reply_jobs'`.execute(db)).rows;
  return rows.map((row) => row.name);
}

// The job queue generalised by 0011 (SQLite rebuilds the table) keeps its rows and indexes, both ways; 0013
// turns the agents' knowledge entries into knowledge-origin text sources with queued ingest jobs.
describe('migrations 0011 and 0013', () => {
  it('keeps reply jobs through 0011 up and down, and turns knowledge entries into queued text sources', async () => {
    const env = freshDatabaseEnv();
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const handle = openDatabase(config.database);
    try {
      await ensureSchema(handle, config.database);
      const schema = config.database.kind === 'postgres' ? config.database.schema : null;
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
      expect((await migrator.migrateTo('0010_invitation_revocation')).error).toBeUndefined();
      const at = new Date().toISOString();
      const db = handle.db as unknown as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- rows as the old schema has them
      await db.insertInto('workspaces').values({ id: WS, name: 'Old', created_at: at }).execute();
      const agent = { workspace_id: WS, status: 'active', instructions: '', welcome_message: null, model: null, temperature: null, description: null,
        lead_capture: '{}', allowed_origins: '[]', metadata: '{}', created_at: at, updated_at: at, published_at: null };
      await db.insertInto('chatbots').values([
        { ...agent, id: BOT, name: 'With', knowledge: JSON.stringify([HOURS, PARKING]) },
        { ...agent, id: 'bot_corrupt', name: 'Corrupt', knowledge: 'not json' },
      ]).execute();
      const job = { id: 'rjob_old', workspace_id: WS, conversation_id: 'conv_old', message_id: 'msg_old', state: 'pending', attempts: 2, run_after: at,
        locked_until: null, last_error: 'boom', reply_message_id: null, created_at: at, updated_at: at };
      await db.insertInto('reply_jobs').values(job).execute();

      expect((await migrator.migrateTo('0011_sources')).error).toBeUndefined();
      // Named columns: the embedded driver's row builder keeps the column names a statement was first prepared with.
      const columns = [...Object.keys(job), 'kind', 'source_id'];
      expect(await db.selectFrom('reply_jobs').select(columns).where('id', '=', 'rjob_old').executeTakeFirst()).toEqual({ ...job, kind: 'reply', source_id: null });
      expect(await indexNames(handle.db)).toEqual(expect.arrayContaining(['reply_jobs_claim', 'reply_jobs_source']));
      // message_id stays unique, and may now be null (ingest jobs).
      await expect(db.insertInto('reply_jobs').values({ ...job, id: 'rjob_dup' }).execute()).rejects.toThrow();
      await db.insertInto('reply_jobs').values({ ...job, id: 'rjob_ingest', kind: 'ingest', source_id: 'src_x', conversation_id: null, message_id: null }).execute();

      expect((await migrator.migrateTo('0010_invitation_revocation')).error).toBeUndefined();
      expect(await db.selectFrom('reply_jobs').select(Object.keys(job)).execute()).toEqual([job]);
      expect(await indexNames(handle.db)).toContain('reply_jobs_claim');

      expect(await migrateToLatest(handle.db, schema)).toContain('0013_knowledge_to_sources');
      const sources = await db.selectFrom('sources').select(['id', 'chatbot_id', 'type', 'origin', 'title', 'status']).orderBy('title').execute();
      expect(sources).toEqual([
        expect.objectContaining({ chatbot_id: BOT, type: 'text', origin: 'knowledge', title: PARKING.title, status: 'queued' }),
        expect.objectContaining({ chatbot_id: BOT, type: 'text', origin: 'knowledge', title: HOURS.title, status: 'queued' }),
      ]);
      const jobs = await db.selectFrom('reply_jobs').select(['source_id', 'state']).where('kind', '=', 'ingest').execute();
      expect(jobs.map((row: { source_id: string }) => row.source_id).sort()).toEqual(sources.map((s: { id: string }) => s.id).sort());
    } finally {
      await handle.close();
    }

    // The service, started on that database, ingests the queued sources: the entries are retrievable.
    const app = await buildApp({ ...testConfig(), database: config.database });
    try {
      await app.ready();
      const ctx = systemContext(WS, 'test');
      const deadline = Date.now() + 20_000;
      let hits: { title: string }[] = [];
      while (hits.length === 0 && Date.now() < deadline) {
        hits = (await app.services.sources.search(ctx, BOT, 'where can I park', 3)).data;
        if (hits.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(hits[0]?.title).toBe(PARKING.title);
    } finally {
      await app.close();
      await dropDatabase(env);
    }
  });
});

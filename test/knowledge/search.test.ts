import fc from 'fast-check';
import { Migrator, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ensureSchema, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Database } from '../../src/db/schema.js';
import { knowledgeRepository } from '../../src/modules/knowledge/repository.js';
import { searchTerms } from '../../src/modules/knowledge/terms.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { makeChatbot } from '../helpers/factories.js';

const HOURS = { title: 'Opening hours', content: 'We are open Monday to Friday, 9am to 5pm.' };
const RETURNS = { title: 'Returns', content: 'Unworn items can be returned within 30 days for a full refund.' };
const SHIPPING = { title: 'Shipping', content: 'We ship to every country in the European Union; delivery takes 3 to 5 working days.' };

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
});
afterAll(async () => t?.close());

function search(workspaceId: string, chatbotId: string, text: string, limit = 5) {
  return knowledgeRepository.search(t.app.database.db, workspaceId, chatbotId, text, limit);
}

describe('knowledge search', () => {
  it('ranks the entries that answer a question, stemming the words', async () => {
    const bot = await makeChatbot(tenant, { knowledge: [RETURNS, HOURS, SHIPPING] });
    const hits = await search(tenant.workspaceId, bot.id, 'What are your opening hours?');
    expect(hits[0]).toEqual({ position: 1, ...HOURS });
    // "returning" finds "returned" (Porter on SQLite, the english config on PostgreSQL).
    expect((await search(tenant.workspaceId, bot.id, 'Is returning a jacket possible?'))[0]?.title).toBe('Returns');
    expect((await search(tenant.workspaceId, bot.id, 'How long does delivery take?'))[0]?.title).toBe('Shipping');
  });

  it('finds nothing for greetings, stopwords and words no entry contains', async () => {
    const bot = await makeChatbot(tenant, { knowledge: [RETURNS, HOURS, SHIPPING] });
    for (const text of ['hi', 'Hello there!', 'What do you do?', 'Do you sell helicopters?', '']) {
      expect(await search(tenant.workspaceId, bot.id, text), text).toEqual([]);
    }
  });

  it('follows edits of the knowledge, in the same write', async () => {
    const bot = await makeChatbot(tenant, { knowledge: [HOURS] });
    expect(await search(tenant.workspaceId, bot.id, 'refund')).toEqual([]);
    let response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { knowledge: [RETURNS, HOURS] });
    expect(response.statusCode, response.body).toBe(200);
    expect(await search(tenant.workspaceId, bot.id, 'refund')).toEqual([{ position: 0, ...RETURNS }]);
    expect(await search(tenant.workspaceId, bot.id, 'opening hours')).toEqual([{ position: 1, ...HOURS }]);
    // Another field changes: the index stays as it is.
    response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { name: 'Renamed' });
    expect(response.statusCode, response.body).toBe(200);
    expect(await search(tenant.workspaceId, bot.id, 'refund')).toHaveLength(1);
    response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { knowledge: [] });
    expect(response.statusCode, response.body).toBe(200);
    expect(await search(tenant.workspaceId, bot.id, 'refund opening hours')).toEqual([]);
  });

  it('is scoped to the agent and to its workspace', async () => {
    const mine = await makeChatbot(tenant, { knowledge: [HOURS] });
    const sibling = await makeChatbot(tenant, { knowledge: [RETURNS] });
    const other = await t.tenant();
    const theirs = await makeChatbot(other, { knowledge: [HOURS, RETURNS] });
    expect(await search(tenant.workspaceId, mine.id, 'refund')).toEqual([]);
    expect(await search(tenant.workspaceId, sibling.id, 'refund')).toHaveLength(1);
    // Their agent's id under my workspace finds nothing.
    expect(await search(tenant.workspaceId, theirs.id, 'opening hours refund')).toEqual([]);
    expect(await search(other.workspaceId, theirs.id, 'opening hours refund')).toHaveLength(2);
  });

  it('never fails on hostile text', async () => {
    const bot = await makeChatbot(tenant, { knowledge: [HOURS, { title: 'Query syntax', content: 'NEAR OR AND NOT column:title "quoted" star* caret^' }] });
    const hostile = [
      '"', '""', '"open', '*', 'open*', 'NEAR(', 'NEAR(open hours, 2)', 'OR', 'open OR', 'AND NOT', '-', '-open', ':', 'title:open',
      'content:', '^open', '(open', 'open)', "'; drop table knowledge_entries; --", '!!', '&|', 'open & | !', '\\', '\u0000open',
      'Öffnungszeiten für Montag', 'café crème', '営業時間は何時ですか', '🙂🙂 open 🙂', 'e\u0301', 'x'.repeat(10_000), 'open '.repeat(500),
    ];
    for (const text of hostile) {
      await expect(search(tenant.workspaceId, bot.id, text), text).resolves.toBeInstanceOf(Array);
    }
    // Operators are plain words: "NEAR" finds the entry that contains the word, "open hours" the other.
    expect((await search(tenant.workspaceId, bot.id, 'NEAR(open hours, 2)')).map((hit) => hit.title).sort()).toEqual(['Opening hours', 'Query syntax']);
    expect((await search(tenant.workspaceId, bot.id, 'title:"quoted"')).map((hit) => hit.title)).toEqual(['Query syntax']);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 80 }), async (text) => {
        const hits = await search(tenant.workspaceId, bot.id, text);
        expect(hits.length).toBeLessThanOrEqual(2);
      }),
      { numRuns: 150 },
    );
  });

  it('indexes the agents that existed before the migration', async () => {
    const env = freshDatabaseEnv();
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const handle = openDatabase(config.database);
    try {
      await ensureSchema(handle, config.database);
      const schema = config.database.kind === 'postgres' ? config.database.schema : null;
      const migrator = (db: Kysely<Database>) =>
        new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
      const { error } = await migrator(handle.db).migrateTo('0003_daily_stats');
      expect(error).toBeUndefined();
      const at = new Date().toISOString();
      await handle.db.insertInto('workspaces').values({ id: 'ws_old', name: 'Old', created_at: at }).execute();
      const agent = { workspace_id: 'ws_old', status: 'active', instructions: '', welcome_message: null, model: null, temperature: null, description: null,
        lead_capture: '{}', allowed_origins: '[]', metadata: '{}', created_at: at, updated_at: at, published_at: null };
      await handle.db.insertInto('chatbots').values([
        { ...agent, id: 'bot_with', name: 'With', knowledge: JSON.stringify([RETURNS, HOURS]) },
        { ...agent, id: 'bot_corrupt', name: 'Corrupt', knowledge: 'not json' },
      ]).execute();
      expect(await migrateToLatest(handle.db, schema)).toContain('0005_knowledge_search');
      expect(await knowledgeRepository.search(handle.db, 'ws_old', 'bot_with', 'opening hours', 5)).toEqual([{ position: 1, ...HOURS }]);
      expect(await knowledgeRepository.search(handle.db, 'ws_old', 'bot_corrupt', 'opening hours', 5)).toEqual([]);
    } finally {
      await handle.close();
      await dropDatabase(env);
    }
  });

  it('turns text into plain words only', () => {
    expect(searchTerms('What are your "opening" hours? (NEAR* -OR:)')).toEqual(['opening', 'hours', 'near']);
    expect(searchTerms("Don't you ship to Zürich?")).toEqual(['ship', 'zürich']);
    expect(searchTerms('hi!')).toEqual([]);
  });
});

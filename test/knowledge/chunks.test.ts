import fc from 'fast-check';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ensureSchema, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Db } from '../../src/db/schema.js';
import { newId } from '../../src/lib/ids.js';
import { knowledgeChunks, type ChunkInput } from '../../src/modules/knowledge/chunks.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { makeChatbot } from '../helpers/factories.js';

// Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set (the suite's pattern).

let t: TestApp;
let tenant: Tenant;
let db: Db;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  db = t.app.database.db;
});
afterAll(async () => t?.close());

interface Doc { title: string; content: string; headingPath?: string[] }

/** Stores each doc as one chunk of its own document (all of one source unless given), through the repository. */
async function store(workspaceId: string, chatbotId: string, docs: Doc[], sourceId = newId('source')) {
  const chunks: ChunkInput[] = docs.map((doc) => ({
    workspaceId, chatbotId, sourceId, documentId: newId('document'), position: 0, title: doc.title,
    url: `https://example.com/${encodeURIComponent(doc.title)}`, headingPath: doc.headingPath ?? [], content: doc.content,
  }));
  const count = await db.transaction().execute((trx) => knowledgeChunks.insert(trx, chunks));
  expect(count).toBe(chunks.length);
  return chunks;
}

async function agent(docs: Doc[] = [], owner: Tenant = tenant) {
  const bot = await makeChatbot(owner);
  const chunks = await store(owner.workspaceId, bot.id, docs);
  return { id: bot.id as string, chunks };
}

const titles = async (chatbotId: string, question: string, workspaceId = tenant.workspaceId, limit = 5) =>
  (await knowledgeChunks.search(db, workspaceId, chatbotId, question, limit)).map((hit) => hit.title);

const ADDRESS = { title: 'Address and parking', content: 'Our shop is located at 12 Harbour Street, next to the ferry terminal. Free parking is available behind the building.' };
const HOURS = { title: 'Opening hours', content: 'We are open Monday to Friday from 9am to 6pm, and on Saturday mornings.' };
const BOOKING = { title: 'Table reservations', content: 'Reservations are confirmed by email within one hour. Large groups should book a week ahead.' };
const RETURNS = { title: 'Returns and refunds', content: 'Unworn items can be returned within 30 days for a full refund.' };
const ENGLISH = [ADDRESS, HOURS, BOOKING, RETURNS];

const SPANISH = { title: 'Reservas de mesa', content: 'Las reservas de mesa se confirman por correo electrónico. Los grupos grandes deben reservar con una semana de antelación.' };
const FRENCH = { title: 'Livraison à domicile', content: 'Nous livrons les commandes à domicile dans toute la ville, du lundi au samedi, le soir après 18 heures.' };
const GERMAN = { title: 'Öffnungszeiten', content: 'Unser Geschäft ist montags bis samstags von 9 bis 18 Uhr geöffnet, sonntags bleibt es geschlossen.' };
const PORTUGUESE = { title: 'Estacionamento', content: 'Os clientes podem estacionar gratuitamente na garagem do prédio, com entrada pela rua lateral.' };

describe('knowledge chunks: retrieval', () => {
  it('ranks the chunk that answers a question first, with scores in (0, 1], best first', async () => {
    const bot = await agent(ENGLISH);
    const hits = await knowledgeChunks.search(db, tenant.workspaceId, bot.id, 'Where are you located?', 5);
    expect(hits[0]).toMatchObject({ title: ADDRESS.title, content: ADDRESS.content, url: bot.chunks[0]!.url, headingPath: [], sourceId: bot.chunks[0]!.sourceId, documentId: bot.chunks[0]!.documentId });
    expect(hits[0]!.chunkId).toEqual(expect.any(Number));
    expect(hits[0]!.score).toBe(1);
    for (const hit of hits) expect(hit.score > 0 && hit.score <= 1).toBe(true);
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
    expect((await titles(bot.id, 'Is there parking near the shop?'))[0]).toBe(ADDRESS.title);
    expect((await titles(bot.id, 'Can I return a jacket I bought?'))[0]).toBe(RETURNS.title);
    expect((await titles(bot.id, 'When do you open on saturday?'))[0]).toBe(HOURS.title);
    expect(await titles(bot.id, 'Do you sell helicopters?')).toEqual([]);
    expect(await titles(bot.id, 'Hello! What do you do?')).toEqual([]);
  });

  it('weighs the title and heading path above the content', async () => {
    const bot = await agent([
      { title: 'Gift cards', content: 'Vouchers can be used in the shop. Ask about our delivery options at the desk.' },
      { title: 'Delivery', content: 'We ship orders within two days.', headingPath: ['Orders'] },
    ]);
    expect((await titles(bot.id, 'delivery'))[0]).toBe('Delivery');
    expect((await titles(bot.id, 'orders'))[0]).toBe('Delivery');
  });

  it('breaks ties by position and honours the limit', async () => {
    const bot = await makeChatbot(tenant);
    const sourceId = newId('source');
    const documentId = newId('document');
    const chunks = [2, 0, 1].map((position) => ({ workspaceId: tenant.workspaceId, chatbotId: bot.id, sourceId, documentId, position, title: 'Menu', url: null, headingPath: ['Food', 'Menu'], content: 'Pizza and pasta.' }));
    await db.transaction().execute((trx) => knowledgeChunks.insert(trx, chunks));
    const hits = await knowledgeChunks.search(db, tenant.workspaceId, bot.id, 'pizza', 2);
    expect(hits).toHaveLength(2);
    expect(hits.map((hit) => hit.headingPath)).toEqual([['Food', 'Menu'], ['Food', 'Menu']]);
    expect(hits[0]!.score).toBe(hits[1]!.score);
    const all = await knowledgeChunks.search(db, tenant.workspaceId, bot.id, 'pizza', 5);
    // Inserted at positions 2, 0, 1 (ids in that order): equal scores come back by position.
    const ids = all.map((hit) => hit.chunkId).sort((a, b) => a - b);
    expect(all.map((hit) => hit.chunkId)).toEqual([ids[1], ids[2], ids[0]]);
    expect(await knowledgeChunks.search(db, tenant.workspaceId, bot.id, 'pizza', 0)).toEqual([]);
  });

  it('answers each language from the chunk in that language, stemming in it', async () => {
    const bot = await agent([...ENGLISH, SPANISH, FRENCH, GERMAN, PORTUGUESE]);
    expect((await titles(bot.id, '¿Cómo reservo una mesa para un grupo grande?'))[0]).toBe(SPANISH.title);
    expect((await titles(bot.id, 'Livrez-vous à domicile le soir ?'))[0]).toBe(FRENCH.title);
    expect((await titles(bot.id, 'Ist das Geschäft am Sonntag geöffnet?'))[0]).toBe(GERMAN.title);
    expect((await titles(bot.id, 'Onde posso estacionar o carro?'))[0]).toBe(PORTUGUESE.title);
    // Without accents, as visitors often type.
    expect((await titles(bot.id, 'Ist das Geschaft am Sonntag geoffnet?'))[0]).toBe(GERMAN.title);
    expect((await titles(bot.id, 'reservas por correo electronico'))[0]).toBe(SPANISH.title);
  });

  it('forgives small typos, from the agent vocabulary only', async () => {
    const bot = await agent(ENGLISH);
    expect((await titles(bot.id, 'parkin'))[0]).toBe(ADDRESS.title);
    expect((await titles(bot.id, 'What is your adress?'))[0]).toBe(ADDRESS.title);
    expect((await titles(bot.id, 'reservaton for a large groop'))[0]).toBe(BOOKING.title);
    expect((await titles(bot.id, 'refnud'))[0]).toBe(RETURNS.title);
    // A word too far from any word of this agent finds nothing; nor does a typo of another agent's word.
    expect(await titles(bot.id, 'barbecue')).toEqual([]);
    expect(await titles(bot.id, 'pxrkxnx')).toEqual([]);
    const other = await agent([{ title: 'Helicopter tours', content: 'Helicopter tours leave every hour.' }]);
    expect(await titles(bot.id, 'helicoptr')).toEqual([]);
    expect(await titles(other.id, 'helicoptr')).toEqual(['Helicopter tours']);
  });

  it('only ever returns the chunks of that agent in that workspace', async () => {
    const mine = await agent([HOURS]);
    const sibling = await agent([ADDRESS, HOURS]);
    const other = await t.tenant();
    const theirs = await agent([ADDRESS, HOURS, RETURNS], other);
    expect(await titles(mine.id, 'parking address opening hours')).toEqual([HOURS.title]);
    expect((await titles(sibling.id, 'parking address opening hours')).sort()).toEqual([ADDRESS.title, HOURS.title]);
    // Their agent under my workspace, mine under theirs: nothing.
    expect(await titles(theirs.id, 'parking opening hours refund')).toEqual([]);
    expect(await titles(mine.id, 'opening hours', other.workspaceId)).toEqual([]);
    expect(await titles(theirs.id, 'parking opening hours refund', other.workspaceId)).toHaveLength(3);
  });

  it('never fails on hostile text, which is only ever words', async () => {
    const bot = await agent([HOURS, { title: 'Query syntax', content: 'NEAR OR AND NOT column:title "quoted" star* caret^ minus-sign' }]);
    const hostile = [
      '"', '""', '"open', '*', 'open*', 'NEAR(', 'NEAR(open hours, 2)', 'OR', 'open OR', 'AND NOT', '-', '-open', ':', 'title:open',
      'chatbot_id:x', 'terms:open', '{title_terms terms}: open', '^open', '(open', 'open)', "'; drop table knowledge_chunks; --", '!!', '&|',
      'open & | !', '\\', '\u0000open', "open:* & !'x'", 'Öffnungszeiten für Montag', '営業時間は何時ですか', '🙂🙂 open 🙂', 'e\u0301',
      'x'.repeat(10_000), 'open '.repeat(500), 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz',
    ];
    for (const text of hostile) {
      await expect(knowledgeChunks.search(db, tenant.workspaceId, bot.id, text, 5), text).resolves.toBeInstanceOf(Array);
    }
    expect((await titles(bot.id, 'NEAR(open hours, 2)')).sort()).toEqual([HOURS.title, 'Query syntax'].sort());
    expect(await titles(bot.id, 'title:"quoted"')).toEqual(['Query syntax']);
    expect(await titles(bot.id, 'caret^')).toEqual(['Query syntax']);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 80 }), async (text) => {
        expect((await knowledgeChunks.search(db, tenant.workspaceId, bot.id, text, 5)).length).toBeLessThanOrEqual(2);
      }),
      { numRuns: 100 },
    );
  });
});

describe('knowledge chunks: ranking words, not spellings (issue 31)', () => {
  it('ranks a chunk holding two of the question\'s words side by side above one holding them apart', async () => {
    const bot = await agent([
      ...ENGLISH,
      { title: 'Workshop', content: 'Our mechanics do every kind of job on any bike, from a puncture to a full service with new bearings, cables and brake pads, checked twice.' },
      { title: 'Help desk', content: 'Service desk: call us. Full refunds on returns.' },
    ]);
    expect((await titles(bot.id, 'How much is a full service?'))[0]).toBe('Workshop');
  });

  it('weighs a word the same whatever language its chunk stems it in', async () => {
    // "Lucía" is "lucia" in the English chunk and "luc" in the Spanish ones: the rarer spelling is no rarer word.
    const bot = await agent([
      { title: 'Our team', content: 'Lucía guides our walking tours of the old harbour and the cliffs, in Spanish and in English, every weekend from April to October.' },
      { title: 'Guía', content: 'Lucía es nuestra guía de Valencia.' },
      { title: 'Ruta de los faros', content: 'Una ruta guiada por Lucía a los tres faros de la costa norte, los domingos.' },
      { title: 'Contacto', content: 'Escribe a Lucía por WhatsApp para reservar una ruta en grupo.' },
    ]);
    expect((await titles(bot.id, '¿Quién es Lucía?'))[0]).toBe('Guía');
  });

  it('takes a name for a name, not for a misspelling of a word the knowledge uses', async () => {
    const bot = await agent([{ title: 'Spare parts', content: 'We stock spare parts for every bike we sell.' }]);
    expect(await titles(bot.id, 'Do you have a shop in Paris?')).toEqual([]);
    expect(await titles(bot.id, 'do you have paris for my bike')).toEqual(['Spare parts']);
  });

  it('says which question word each matched term stands for', async () => {
    const bot = await agent([{ title: 'Alquiler', content: 'Alquilamos bicicletas eléctricas por días, con casco y candado.' }]);
    const [hit] = await knowledgeChunks.search(db, tenant.workspaceId, bot.id, '¿Alquiláis bicicletas eléctricas?', 5);
    // The word as compared (folded), whatever the term.
    expect(hit?.matched.map(({ term, word }) => ({ term, word }))).toEqual(expect.arrayContaining([{ term: 'electr', word: 'electricas' }, { term: 'biciclet', word: 'bicicletas' }]));
  });
});

describe('knowledge chunks: deletion', () => {
  it('removes a document, a source or an agent from retrieval, and their words from its vocabulary', async () => {
    const bot = await makeChatbot(tenant);
    const [address, hours] = await store(tenant.workspaceId, bot.id, [ADDRESS, HOURS]);
    const [booking] = await store(tenant.workspaceId, bot.id, [BOOKING]);
    const sibling = await agent([ADDRESS]);
    const vocabulary = async (chatbotId: string) =>
      (await db.selectFrom('knowledge_terms').select(['word', 'docs']).where('workspace_id', '=', tenant.workspaceId).where('chatbot_id', '=', chatbotId).execute())
        .reduce<Record<string, number>>((all, row) => ({ ...all, [row.word]: Number(row.docs) }), {});
    const variants = async (chatbotId: string) =>
      Number((await db.selectFrom('knowledge_term_variants').select((e) => e.fn.countAll().as('n')).where('workspace_id', '=', tenant.workspaceId).where('chatbot_id', '=', chatbotId).executeTakeFirstOrThrow()).n);
    expect((await vocabulary(bot.id)).parking).toBe(1);
    expect((await vocabulary(bot.id)).open).toBe(1);

    // Another workspace's id deletes nothing.
    const other = await t.tenant();
    expect(await db.transaction().execute((trx) => knowledgeChunks.deleteByDocument(trx, other.workspaceId, address!.documentId))).toBe(0);
    expect(await db.transaction().execute((trx) => knowledgeChunks.deleteByDocument(trx, tenant.workspaceId, address!.documentId))).toBe(1);
    expect(await titles(bot.id, 'Where are you located? parking')).toEqual([]);
    expect(await titles(bot.id, 'parkin')).toEqual([]);
    expect((await vocabulary(bot.id)).parking).toBeUndefined();
    expect(await titles(sibling.id, 'parkin')).toEqual([ADDRESS.title]);
    expect(await titles(bot.id, 'opening')).toEqual([HOURS.title]);

    expect(await db.transaction().execute((trx) => knowledgeChunks.deleteBySource(trx, tenant.workspaceId, hours!.sourceId))).toBe(1);
    expect(await titles(bot.id, 'opening')).toEqual([]);
    expect(await titles(bot.id, 'reservations')).toEqual([BOOKING.title]);
    expect(Object.keys(await vocabulary(bot.id)).sort()).toEqual(Object.keys(await vocabularyOfBooking()).sort());

    expect(await db.transaction().execute((trx) => knowledgeChunks.deleteByChatbot(trx, tenant.workspaceId, bot.id))).toBe(1);
    expect(await titles(bot.id, 'reservations')).toEqual([]);
    expect(await vocabulary(bot.id)).toEqual({});
    expect(await variants(bot.id)).toBe(0);
    expect(await titles(sibling.id, 'Where are you located?')).toEqual([ADDRESS.title]);
    expect(booking!.sourceId).not.toBe(hours!.sourceId);
  });
});

/** The vocabulary an agent holding only BOOKING has. */
async function vocabularyOfBooking(): Promise<Record<string, number>> {
  const bot = await agent([BOOKING]);
  const rows = await db.selectFrom('knowledge_terms').select(['word', 'docs']).where('workspace_id', '=', tenant.workspaceId).where('chatbot_id', '=', bot.id).execute();
  return Object.fromEntries(rows.map((row) => [row.word, Number(row.docs)]));
}

describe('knowledge chunks: migration', () => {
  it('goes down and up again', async () => {
    const env = freshDatabaseEnv();
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const handle = openDatabase(config.database);
    try {
      await ensureSchema(handle, config.database);
      const schema = config.database.kind === 'postgres' ? config.database.schema : null;
      await migrateToLatest(handle.db, schema);
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
      const { error } = await migrator.migrateTo('0011_sources');
      expect(error).toBeUndefined();
      for (const table of ['knowledge_chunks', 'knowledge_terms', 'knowledge_term_variants'] as const) {
        await expect(handle.db.selectFrom(table).select('chatbot_id').execute()).rejects.toThrow();
      }
      expect(await migrateToLatest(handle.db, schema)).toContain('0012_knowledge_chunks');
      expect(await handle.db.selectFrom('knowledge_chunks').select('id').execute()).toEqual([]);
    } finally {
      await handle.close();
      await dropDatabase(env);
    }
  });
});

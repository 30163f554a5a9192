import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { knowledgeChunks } from '../../src/modules/knowledge/chunks.js';
import { knowledgeVectors, MIN_TRAINED } from '../../src/modules/knowledge/vectors.js';
import { dot, unit } from '../../src/modules/knowledge/vector-math.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { hashedEmbedding, startOpenAiServer, type OpenAiTestServer } from '../helpers/openai-server.js';
import { eventually, makeActiveChatbot, startConversation } from '../runtime/support.js';

// Hybrid retrieval (issue 30, point 5): with EMBEDDINGS_PROVIDER=openai, chunks are embedded through the
// OpenAI-compatible /embeddings endpoint (a local server here) and search fuses full text with the nearest
// vectors. The server's embedding knows that "located", "address" and "location" mean one thing, as a real
// model does: the vector side finds what full text cannot.
const SYNONYMS = new Set(['located', 'address', 'location', 'situated']);
function conceptEmbedding(text: string): number[] {
  const vector = hashedEmbedding(text.split(/\s+/).filter((word) => !SYNONYMS.has(word.toLowerCase().replace(/\W/g, ''))).join(' '));
  const concept = text.toLowerCase().match(/\p{L}+/gu)?.filter((word) => SYNONYMS.has(word)).length ?? 0;
  return [...vector, concept * 4];
}

let t: TestApp;
let tenant: Tenant;
let server: OpenAiTestServer;

beforeAll(async () => {
  server = await startOpenAiServer(undefined, { embed: conceptEmbedding });
  const defaults = loadConfig({});
  t = await createTestApp({ sources: { ...defaults.sources, embeddings: { baseUrl: server.baseUrl, model: 'test-embedding', apiKey: 'sk-test-embeddings' } } });
  tenant = await t.tenant();
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

const db = () => t.app.database.db;

async function vectorCount(chatbotId: string): Promise<number> {
  const row = await db().selectFrom('knowledge_vectors').select((eb) => eb.fn.countAll<number | string>().as('n')).where('chatbot_id', '=', chatbotId).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function chunkCount(chatbotId: string): Promise<number> {
  const row = await db().selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll<number | string>().as('n')).where('chatbot_id', '=', chatbotId).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function addText(chatbotId: string, title: string, content: string): Promise<string> {
  const response = await tenant.request('POST', `/api/v1/chatbots/${chatbotId}/sources`, { type: 'text', title, content });
  expect(response.statusCode).toBe(201);
  return response.json().id;
}

async function search(chatbotId: string, q: string): Promise<{ title: string; score: number }[]> {
  const response = await tenant.request('GET', `/api/v1/chatbots/${chatbotId}/knowledge/search?q=${encodeURIComponent(q)}&limit=3`);
  expect(response.statusCode).toBe(200);
  return response.json().data;
}

describe('hybrid retrieval', () => {
  it('embeds every chunk through /embeddings and finds by meaning what full text misses', async () => {
    const bot = await makeActiveChatbot(tenant);
    await addText(bot.id, 'Address and parking', 'Our shop is at 12 Harbour Road. Park for free behind the building.');
    await addText(bot.id, 'Opening hours', 'We open at nine every weekday and at ten on Saturdays.');
    await addText(bot.id, 'Returns', 'Unused items can be returned within thirty days with the receipt.');
    await eventually(async () => ((await vectorCount(bot.id)) === (await chunkCount(bot.id)) ? true : undefined));

    const embeddingRequests = server.requests.filter((request) => request.path === '/v1/embeddings');
    expect(embeddingRequests.length).toBeGreaterThan(0);
    expect(embeddingRequests[0]!.body.model).toBe('test-embedding');
    expect(embeddingRequests[0]!.headers.authorization).toBe('Bearer sk-test-embeddings');

    const fullText = await knowledgeChunks.search(db(), tenant.workspaceId, bot.id, 'Where are you located?', 3);
    expect(fullText.map((hit) => hit.title)).not.toContain('Address and parking');
    const hybrid = await search(bot.id, 'Where are you located?');
    expect(hybrid[0]?.title).toBe('Address and parking');
    expect(hybrid[0]?.score).toBe(1);
    // What full text finds still comes first when the words match.
    expect((await search(bot.id, 'When do you open on Saturdays?'))[0]?.title).toBe('Opening hours');

    // The reply engine retrieves the same way.
    const { conversation_id: conversationId } = await startConversation(t.app, bot.id);
    expect((await tenant.request('POST', `/api/v1/conversations/${conversationId}/messages`, { content: 'Where are you located?' })).statusCode).toBe(201);
    const answer = await eventually(async () => {
      const messages = (await tenant.request('GET', `/api/v1/conversations/${conversationId}/messages`)).json().data as { role: string; content: string }[];
      return messages.find((message) => message.role === 'assistant')?.content;
    });
    expect(answer).toContain('12 Harbour Road');
  });

  it('answers by full text while the endpoint fails, and a re-sync embeds what was missed', async () => {
    const bot = await makeActiveChatbot(tenant);
    server.failEmbeddings(400);
    try {
      const id = await addText(bot.id, 'Address and parking', 'Our shop is at 12 Harbour Road.');
      await eventually(async () => {
        const source = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${id}`)).json();
        const jobs = await db().selectFrom('reply_jobs').select('state').where('source_id', '=', id).execute();
        return source.status === 'ready' && jobs.every((job) => job.state === 'done') ? true : undefined;
      });
      expect(await vectorCount(bot.id)).toBe(0);
      expect((await search(bot.id, 'Harbour Road'))[0]?.title).toBe('Address and parking');
      expect(await search(bot.id, 'Where are you located?')).toEqual([]);

      server.failEmbeddings(null);
      expect((await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources/${id}/sync`)).statusCode).toBe(202);
      await eventually(async () => ((await vectorCount(bot.id)) > 0 ? true : undefined));
      expect((await search(bot.id, 'Where are you located?'))[0]?.title).toBe('Address and parking');
    } finally {
      server.failEmbeddings(null);
    }
  });

  it('removes a source\'s vectors with it, and starts afresh for another model', async () => {
    const bot = await makeActiveChatbot(tenant);
    const keep = await addText(bot.id, 'Returns', 'Unused items can be returned within thirty days.');
    const gone = await addText(bot.id, 'Address and parking', 'Our shop is at 12 Harbour Road.');
    await eventually(async () => ((await vectorCount(bot.id)) === 2 ? true : undefined));
    expect((await tenant.request('DELETE', `/api/v1/chatbots/${bot.id}/sources/${gone}`)).statusCode).toBe(204);
    expect(await vectorCount(bot.id)).toBe(1);
    expect(keep).toMatch(/^src_/);

    await knowledgeVectors.useModel(db(), tenant.workspaceId, bot.id, 'another-model');
    expect(await vectorCount(bot.id)).toBe(0);
    expect(await knowledgeVectors.model(db(), tenant.workspaceId, bot.id)).toBeUndefined();
  });
});

describe('the vector index', () => {
  // Clustered vectors: 40 centres in 16 dimensions, each vector a centre plus noise (a seeded generator).
  function generator(seed: number) {
    let state = seed;
    return () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  }

  it('trains cells once the agent has enough vectors, and a search reading a few cells finds what a full scan finds', async () => {
    const bot = await makeActiveChatbot(tenant);
    const random = generator(7);
    const centres = Array.from({ length: 40 }, () => unit(Array.from({ length: 16 }, random)));
    const total = MIN_TRAINED + 200;
    const vectors = Array.from({ length: total }, (_, i) => unit(Array.from(centres[i % 40]!, (value) => value + random() * 0.25)));
    const sourceId = await addText(bot.id, 'Placeholder', 'Placeholder text.');
    // Its embedding job done first, so it does not race the synthetic vectors below.
    await eventually(async () => {
      const jobs = await db().selectFrom('reply_jobs').select('state').where('source_id', '=', sourceId).execute();
      return jobs.length > 0 && jobs.every((job) => job.state === 'done') ? true : undefined;
    });
    await db().transaction().execute((trx) => knowledgeChunks.insert(trx, vectors.map((_, i) => ({
      workspaceId: tenant.workspaceId, chatbotId: bot.id, sourceId, documentId: 'doc_synthetic', position: i, title: `Chunk ${i}`, url: null, headingPath: [], content: `synthetic chunk number ${i}`,
    }))));
    const chunks = await db().selectFrom('knowledge_chunks').select(['id', 'position']).where('chatbot_id', '=', bot.id).where('document_id', '=', 'doc_synthetic').execute();
    const idOf = new Map(chunks.map((chunk) => [chunk.position, Number(chunk.id)]));
    // The placeholder's vector is of the test model: another model starts the index afresh.
    await knowledgeVectors.useModel(db(), tenant.workspaceId, bot.id, 'synthetic');
    await knowledgeVectors.add(db(), tenant.workspaceId, bot.id, 'synthetic', vectors.map((vector, i) => ({ chunkId: idOf.get(i)!, vector })));

    expect(await knowledgeVectors.trainIfDue(db(), tenant.workspaceId, bot.id)).toBe(true);
    const index = await db().selectFrom('knowledge_vector_indexes').selectAll().where('chatbot_id', '=', bot.id).executeTakeFirstOrThrow();
    expect(index).toMatchObject({ cells: Math.round(Math.sqrt(total)), generation: 1, trained_vectors: total, model: 'synthetic' });
    expect(await knowledgeVectors.trainIfDue(db(), tenant.workspaceId, bot.id)).toBe(false);

    let found = 0;
    for (let q = 0; q < 20; q++) {
      const query = unit(Array.from(centres[q]!, (value) => value + random() * 0.25));
      const exact = vectors.map((vector, i) => ({ id: idOf.get(i)!, score: dot(vector, query) })).sort((a, b) => b.score - a.score).slice(0, 10).map((hit) => hit.id);
      const hits = await knowledgeVectors.nearest(db(), tenant.workspaceId, bot.id, 'synthetic', query, 10);
      expect(hits).toHaveLength(10);
      found += hits.filter((hit) => exact.includes(hit.chunkId)).length;
    }
    expect(found / 200).toBeGreaterThanOrEqual(0.9);
    // Another model's question reads nothing.
    expect(await knowledgeVectors.nearest(db(), tenant.workspaceId, bot.id, 'another', centres[0]!, 10)).toEqual([]);
  });
});

describe('EMBEDDINGS_* configuration', () => {
  it('is off by default, and defaults to the OpenAI base URL and key', () => {
    expect(loadConfig({}).sources.embeddings).toBeNull();
    expect(loadConfig({ EMBEDDINGS_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/', OPENAI_API_KEY: 'sk-x' }).sources.embeddings)
      .toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'text-embedding-3-small', apiKey: 'sk-x' });
    expect(loadConfig({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_BASE_URL: 'http://e:8080/v1', EMBEDDINGS_MODEL: 'nomic-embed-text', EMBEDDINGS_API_KEY: 'k', OPENAI_API_KEY: 'sk-x' }).sources.embeddings)
      .toEqual({ baseUrl: 'http://e:8080/v1', model: 'nomic-embed-text', apiKey: 'k' });
  });

  it('refuses an unknown provider, and OpenAI itself without a key', () => {
    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'cohere' })).toThrow(/EMBEDDINGS_PROVIDER must be none or openai/);
    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'openai' })).toThrow(/EMBEDDINGS_API_KEY/);
  });
});

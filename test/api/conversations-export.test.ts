import { get, type IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationRow } from '../../src/modules/conversations/repository.js';
import type { MessageRow } from '../../src/modules/messages/repository.js';
import { loadConfig } from '../../src/config.js';
import { systemContext } from '../../src/lib/actor.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/dashboard.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem, testClock } from './support.js';

// GET /api/v1/conversations/export (issue 33 §6): every conversation matching the list's filters with its
// messages, as JSON Lines or CSV, streamed page by page: 10,000 conversations come out complete, and the
// server produces the file as it is read instead of building it first.

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const COUNT = 10_000;
const clock = testClock();
let t: TestApp;
let big: Tenant;
let small: Tenant;
let bigBot: string;
let baseUrl: string;

const T0 = Date.parse('2026-04-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
// Long enough that the export (≈ 9 MB) is far larger than what the sockets' buffers hold.
const FILLER = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

type Exported = { id: string; chatbot_id: string; status: string; visitor: { name: string | null; email: string | null }; messages: { id: string; role: string; content: string; created_at: string }[] };

/** Inserts `count` conversations of one agent with two messages each, in multi-row statements (not 10,000 requests). */
async function seed(tenant: Tenant, chatbotId: string, count: number): Promise<void> {
  const { db } = t.app.database;
  for (let start = 0; start < count; start += 1000) {
    const conversations: ConversationRow[] = [];
    const messages: MessageRow[] = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const at = T0 + i * 1000;
      const id = newId('conversation', at);
      conversations.push({
        id, workspace_id: tenant.workspaceId, chatbot_id: chatbotId, status: 'open', mode: 'agent', channel: 'widget', visitor_id: newId('visitor', at),
        visitor_name: `Visitor ${i}`, visitor_email: null, lead_id: null, message_count: 2, last_message_at: iso(at + 2), metadata: '{}',
        created_at: iso(at), updated_at: iso(at + 2), handoff_requested_at: null, origin: null, locale: null,
      });
      for (const [n, role] of [[1, 'user'], [2, 'assistant']] as const) {
        messages.push({
          id: newId('message', at + n), workspace_id: tenant.workspaceId, conversation_id: id, chatbot_id: chatbotId, role,
          content: `#${i} ${role}: ${FILLER}`, author_type: role === 'user' ? 'visitor' : 'agent', author_id: null, created_at: iso(at + n), sources: '[]', outcome: null,
        });
      }
    }
    await db.insertInto('conversations').values(conversations).execute();
    await db.insertInto('messages').values(messages).execute();
  }
}

/** GETs a URL over real HTTP; `onFirstChunk` runs while the response is paused after its first chunk. */
function download(path: string, onFirstChunk: (response: IncomingMessage) => Promise<void>): Promise<{ response: IncomingMessage; body: string }> {
  return new Promise((resolve, reject) => {
    get(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${big.key}` } }, (response) => {
      const parts: Buffer[] = [];
      let first = true;
      response.on('data', (chunk: Buffer) => {
        parts.push(chunk);
        if (!first) return;
        first = false;
        response.pause();
        onFirstChunk(response).then(() => response.resume(), reject);
      });
      response.on('end', () => resolve({ response, body: Buffer.concat(parts).toString('utf8') }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

const memory = () => {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
};

beforeAll(async () => {
  // The seeded conversations are months old: idle close (its sweep runs every minute) would close them mid-test.
  t = await createTestApp({ runtime: { ...loadConfig({}).runtime, idleCloseMinutes: 0 } }, { clock, replyWorker: false });
  big = await t.tenant();
  small = await t.tenant();
  bigBot = (await makeChatbot(big)).id;
  await seed(big, bigBot, COUNT);
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = address.replace('localhost', '127.0.0.1');
}, 120_000);
afterAll(() => t?.close());

describe('10,000 conversations', () => {
  it('exports every one with its messages as JSON Lines, produced while the reader reads', async () => {
    const oldest = await t.app.database.db.selectFrom('conversations').select('id').where('workspace_id', '=', big.workspaceId).orderBy('created_at', 'asc').limit(1).executeTakeFirstOrThrow();
    let pausedGrowth = 0;
    const before = memory();
    const { response, body } = await download('/api/v1/conversations/export', async () => {
      // The first bytes are out: a message added now to the conversation the file ends with must still be in
      // it, as the server has not read that far. A server that built the file first would miss it.
      await t.app.services.messages.send(systemContext(big.workspaceId, 'test'), oldest.id, { content: 'LATE MARKER', role: 'operator' });
      // The reader stops for a while: the server must wait for it, holding one page, not the file.
      await new Promise((resolve) => setTimeout(resolve, 500));
      pausedGrowth = memory() - before;
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/x-ndjson');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="conversations-\d{4}-\d{2}-\d{2}\.jsonl"$/);

    const lines = body.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(COUNT);
    const seen = new Set<string>();
    let previous = '\uffff';
    for (const line of lines) {
      const conversation = JSON.parse(line) as Exported & { created_at: string };
      seen.add(conversation.id);
      expect(conversation.created_at < previous).toBe(true); // newest first, no repeats
      previous = conversation.created_at;
    }
    expect(seen.size).toBe(COUNT);
    const sample = JSON.parse(lines[COUNT - 2]!) as Exported;
    expect(sample).toMatchObject({ chatbot_id: bigBot, status: 'open', visitor: { name: 'Visitor 1', email: null } });
    expect(sample.messages.map((m) => [m.role, m.content])).toEqual([['user', `#1 user: ${FILLER}`], ['assistant', `#1 assistant: ${FILLER}`]]);
    const last = JSON.parse(lines[COUNT - 1]!) as Exported;
    expect(last.id).toBe(oldest.id);
    expect(last.messages.map((m) => m.content)).toEqual([`#0 user: ${FILLER}`, `#0 assistant: ${FILLER}`, 'LATE MARKER']);

    // While the reader paused, the server held far less than the file (a buffered export holds all of it).
    expect(pausedGrowth).toBeLessThan(body.length / 3);
  }, 120_000);

  it('exports them as CSV: a header, then one row per message with its conversation\'s columns', async () => {
    const { response, body } = await download('/api/v1/conversations/export?format=csv', async () => undefined);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="conversations-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = body.split('\r\n');
    expect(rows.pop()).toBe('');
    expect(rows[0]).toBe(
      'conversation_id,chatbot_id,status,mode,channel,origin,visitor_id,visitor_name,visitor_email,lead_id,conversation_created_at,handoff_requested_at,message_id,message_role,message_author_type,message_content,message_created_at',
    );
    expect(rows).toHaveLength(1 + COUNT * 2 + 1); // the LATE MARKER of the test above included
    expect(new Set(rows.slice(1).map((row) => row.split(',')[0])).size).toBe(COUNT);
  }, 120_000);
});

describe('filters and formats', () => {
  const data = {} as { a: string; b: string; c: string; botA: string; botB: string };

  beforeAll(async () => {
    const ctx = systemContext(small.workspaceId, 'test');
    const { conversations, messages } = t.app.services;
    data.botA = (await makeChatbot(small, { name: 'A' })).id;
    data.botB = (await makeChatbot(small, { name: 'B' })).id;
    clock.set('2026-05-01T10:00:00.000Z');
    data.a = (await conversations.start(ctx, { chatbotId: data.botA, channel: 'widget', visitor: { name: 'Ada', email: 'ada@example.com' } })).id;
    await messages.send(ctx, data.a, { content: 'Refund, please: "now",\nthanks', role: 'operator' });
    await messages.send(ctx, data.a, { content: '=HYPERLINK("http://evil")', role: 'operator' });
    clock.set('2026-05-02T10:00:00.000Z');
    data.b = (await conversations.start(ctx, { chatbotId: data.botB, channel: 'api' })).id;
    await messages.send(ctx, data.b, { content: 'Shipping to Porto?', role: 'operator' });
    await conversations.close(ctx, data.b);
    clock.set('2026-05-03T10:00:00.000Z');
    data.c = (await conversations.start(ctx, { chatbotId: data.botA, channel: 'widget' })).id;
    clock.release();
  });

  const exported = async (query: string) => {
    const response = await small.request('GET', `/api/v1/conversations/export${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.body.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Exported);
  };

  it('applies the list\'s filters: search, agent, status, mode, creation time', async () => {
    expect((await exported('')).map((c) => c.id)).toEqual([data.c, data.b, data.a]);
    expect((await exported('?q=REFUND')).map((c) => c.id)).toEqual([data.a]);
    expect((await exported(`?chatbot_id=${data.botA}`)).map((c) => c.id)).toEqual([data.c, data.a]);
    expect((await exported('?status=closed')).map((c) => c.id)).toEqual([data.b]);
    expect((await exported('?mode=human')).map((c) => c.id)).toEqual([data.b, data.a]);
    expect((await exported('?created_after=2026-05-01T12:00:00Z&created_before=2026-05-02T12:00:00Z')).map((c) => c.id)).toEqual([data.b]);
    expect(await exported('?q=nothing-like-this')).toEqual([]);
  });

  it('writes a conversation\'s messages oldest first, and its visitor', async () => {
    const [a] = await exported('?q=refund');
    expect(a!.visitor).toMatchObject({ name: 'Ada', email: 'ada@example.com' });
    expect(a!.messages.map((m) => m.content)).toEqual(['Refund, please: "now",\nthanks', '=HYPERLINK("http://evil")']);
  });

  it('quotes CSV cells, neutralises formulas, and keeps a conversation without messages as one row', async () => {
    const response = await small.request('GET', `/api/v1/conversations/export?format=csv&chatbot_id=${data.botA}`);
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('"Refund, please: ""now"",\nthanks"');
    expect(response.body).toContain(`"'=HYPERLINK(""http://evil"")"`);
    const rows = response.body.split('\r\n').filter(Boolean);
    expect(rows.filter((row) => row.startsWith(data.c))).toEqual([expect.stringMatching(new RegExp(`^${data.c},${data.botA},open,agent,widget,,vis_\\w+,,,,2026-05-03T10:00:00.000Z,,,,,,$`))]);
  });

  it('refuses a bad filter or format with 400 problem details, and needs conversations:read', async () => {
    for (const query of ['format=xml', 'status=bogus', 'created_after=yesterday', 'q=a%20b%20c%20d%20e%20f%20g%20h%20i', 'limit=5', 'cursor=abc']) {
      const problem = expectProblem(await small.request('GET', `/api/v1/conversations/export?${query}`), 400);
      expect(JSON.stringify(problem), query).toContain(query.split('=')[0]!);
    }
    const key = await small.newKey(['leads:read']);
    const forbidden = await t.app.inject({ method: 'GET', url: '/api/v1/conversations/export', headers: { authorization: `Bearer ${key.key}` } });
    expectProblem(forbidden, 403);
  });

  it('is offered to the dashboard with the same filters, for the signed-in workspace only', async () => {
    const user = await signUp(t.app);
    const ctx = systemContext(user.workspaceId, 'test');
    const bot = await t.app.services.chatbots.create(ctx, { name: 'Mine' });
    const mine = await t.app.services.conversations.start(ctx, { chatbotId: bot.chatbot.id, channel: 'widget' });
    await t.app.services.messages.send(ctx, mine.id, { content: 'hello from the dashboard', role: 'operator' });
    const csv = await user.request('GET', '/app/api/conversations/export?format=csv&q=hello');
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/attachment; filename="conversations-.*\.csv"/);
    expect(csv.body.split('\r\n').filter(Boolean)).toHaveLength(2);
    const lines = await user.request('GET', '/app/api/conversations/export');
    expect(lines.headers['content-type']).toBe('application/x-ndjson');
    expect(lines.body.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as Exported).id)).toEqual([mine.id]);
    expectProblem(await user.request('GET', '/app/api/conversations/export?format=pdf'), 400);
  });
});

import { CompiledQuery, type Kysely, type KyselyPlugin, type QueryId, type RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { migrateToLatest } from '../../src/db/database.js';
import { newId } from '../../src/lib/ids.js';
import { eventRepository } from '../../src/modules/events/repository.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { backend, freshUnmigrated } from '../helpers/database.js';
import { openSse } from '../helpers/sse.js';
import { makeActiveChatbot, startConversation } from './support.js';

// A visitor's stream resumed with Last-Event-ID reads its own conversation's events through the index
// (workspace_id, conversation_id, seq), not the workspace's whole log filtered in JavaScript.

/** Events of other conversations written between the visitor's: more than one page (500) of the log. */
const OTHER_EVENTS = 700;

describe('visitor replay by conversation', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let mine: Awaited<ReturnType<typeof startConversation>>;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    const chatbotId = (await makeActiveChatbot(tenant, { name: 'Busy agent' })).id;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const ctx = systemContext(tenant.workspaceId, 'test');
    const say = (conversationId: string, content: string) => t.app.services.messages.send(ctx, conversationId, { role: 'operator', content });
    mine = await startConversation(t.app, chatbotId);
    await say(mine.conversation_id, 'first for the visitor');
    const others = await Promise.all(Array.from({ length: 10 }, () => startConversation(t.app, chatbotId)));
    for (let i = 0; i < OTHER_EVENTS; i += others.length) {
      await Promise.all(others.map((other, j) => say(other.conversation_id, `for someone else ${i + j}`)));
    }
    await say(mine.conversation_id, 'second for the visitor');
  }, 120_000);

  afterAll(async () => {
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('Last-Event-ID: 0 replays only the conversation\'s events, in order, then goes live', async () => {
    const stream = await openSse(`${base}/widget/v1/conversations/${mine.conversation_id}/events`, { authorization: `Bearer ${mine.visitor_token}`, 'last-event-id': '0' });
    expect(stream.status).toBe(200);
    const ready = await stream.waitFor((event) => event.event === 'ready');
    const replayed = stream.events.slice(0, stream.events.indexOf(ready));
    expect(replayed.map((event) => [event.event, (event.data as { content?: string }).content])).toEqual([
      ['conversation', undefined],
      ['message', 'first for the visitor'],
      ['conversation', undefined],
      ['message', 'second for the visitor'],
    ]);
    for (const event of replayed) {
      const data = event.data as { id: string; conversation_id?: string };
      expect(event.event === 'conversation' ? data.id : data.conversation_id).toBe(mine.conversation_id);
    }
    const ids = replayed.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.at(-1)! - ids[0]!).toBeGreaterThan(OTHER_EVENTS);
    stream.close();
  });

  it('the repository reads one conversation\'s events past any number of others, in one query of `limit` rows', async () => {
    const db = t.app.database.db;
    const rows = await eventRepository.after(db, tenant.workspaceId, { after: 0, conversationId: mine.conversation_id }, 4);
    expect(rows.map((row) => [row.type, row.conversation_id])).toEqual([
      ['conversation.created', mine.conversation_id],
      ['message.created', mine.conversation_id],
      ['conversation.updated', mine.conversation_id],
      ['message.created', mine.conversation_id],
    ]);
    // `upTo` bounds the range: the catch-up of a stream stops where the live tail took over.
    const upTo = Number(rows[2]!.seq);
    expect((await eventRepository.after(db, tenant.workspaceId, { after: 0, upTo, conversationId: mine.conversation_id }, 10)).map((row) => Number(row.seq))).toEqual(rows.slice(0, 3).map((row) => Number(row.seq)));
    // Another workspace's id finds nothing.
    expect(await eventRepository.after(db, newId('workspace'), { after: 0, conversationId: mine.conversation_id }, 10)).toEqual([]);
  });

  it.runIf(backend === 'sqlite')('the query goes through the (workspace_id, conversation_id, seq) index (SQLite query plan)', async () => {
    const db = t.app.database.db;
    const seen: { node: RootOperationNode; queryId: QueryId }[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        seen.push(args);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const recording = db.withPlugin(recorder);
    await eventRepository.after(recording, tenant.workspaceId, { after: 0, conversationId: mine.conversation_id }, 10);
    const compiled = recording.getExecutor().compileQuery(seen[0]!.node, seen[0]!.queryId);
    const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
    const details = plan.rows.map((row) => row.detail).join('\n');
    expect(details).toMatch(/USING INDEX events_workspace_conversation_seq \(workspace_id=\? AND conversation_id=\? AND seq>\?\)/);
    // Read in index order: no sorting step.
    expect(details).not.toMatch(/TEMP B-TREE/);
  });
});

describe('migration 0025', () => {
  it('gives the events written before it their conversation, from their payload, and can be undone', async () => {
    const { handle, migrator, schema, remove } = await freshUnmigrated();
    try {
      expect((await migrator.migrateTo('0023_conversation_origin')).error).toBeUndefined();
      const db = handle.db as unknown as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- rows as the old schema has them
      const workspaceId = newId('workspace');
      const at = new Date().toISOString();
      await db.insertInto('workspaces').values({ id: workspaceId, name: 'Old events', created_at: at }).execute();
      const old = [
        ['conversation.created', { id: 'conv_a', status: 'open' }],
        ['message.created', { id: 'msg_1', conversation_id: 'conv_a', content: 'hello' }],
        ['conversation.updated', { id: 'conv_a', status: 'closed' }],
        ['lead.created', { id: 'lead_1', conversation_id: 'conv_b', email: 'a@example.com' }],
        ['lead.updated', { id: 'lead_2', conversation_id: null }],
        ['chatbot.created', { id: 'bot_1', name: 'Agent' }],
        ['source.synced', { id: 'src_1', chatbot_id: 'bot_1' }],
      ] as const;
      await db
        .insertInto('events')
        .values(old.map(([type, data], i) => ({ id: `event_old_${i}`, workspace_id: workspaceId, seq: i + 1, type, created_at: at, data: JSON.stringify(data) })))
        .execute();

      expect(await migrateToLatest(handle.db, schema)).toContain('0025_event_conversations');
      const rows = await db.selectFrom('events').select(['type', 'conversation_id']).where('workspace_id', '=', workspaceId).orderBy('seq').execute();
      expect(rows.map((row: { conversation_id: string | null }) => row.conversation_id)).toEqual(['conv_a', 'conv_a', 'conv_a', 'conv_b', null, null, null]);
      const replay = await eventRepository.after(handle.db, workspaceId, { after: 0, conversationId: 'conv_a' }, 10);
      expect(replay.map((row) => row.id)).toEqual(['event_old_0', 'event_old_1', 'event_old_2']);

      expect((await migrator.migrateTo('0023_conversation_origin')).error).toBeUndefined();
      expect(await db.selectFrom('events').select(['id', 'type']).where('workspace_id', '=', workspaceId).execute()).toHaveLength(old.length);
    } finally {
      await remove();
    }
  });
});

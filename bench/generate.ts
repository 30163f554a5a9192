import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { systemContext } from '../src/lib/actor.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { rebuildDailyStats } from '../src/modules/stats/rebuild.js';
import { createServices } from '../src/services.js';

/** How much data to generate. */
export interface DataSize {
  agents: number;
  leads: number;
  largeConversations: number;
  largeMessagesPerConversation: number;
  smallConversations: number;
  smallMessagesPerConversation: number;
}

export const SIZES: Record<'full' | 'tiny', DataSize> = {
  full: { agents: 1000, leads: 100_000, largeConversations: 100_000, largeMessagesPerConversation: 10, smallConversations: 1000, smallMessagesPerConversation: 10 },
  tiny: { agents: 20, leads: 300, largeConversations: 200, largeMessagesPerConversation: 5, smallConversations: 20, smallMessagesPerConversation: 5 },
};

/** The ids and keys the scenarios use. */
export interface DataSet {
  main: { workspaceId: string; key: string; chatbotIds: string[]; deepCursor: string | null };
  large: { workspaceId: string; key: string };
  small: { workspaceId: string; key: string };
  secondKey: string;
}

const DAY = 86_400_000;
/**
 * Conversations idle for longer than the service's default idle close (30 minutes) are generated closed,
 * as the idle sweep leaves them in a steady state; otherwise the first sweep of the benchmarked server
 * closes tens of thousands of them (a transaction and an audit event each) during the measurements.
 */
const IDLE_CLOSE_MS = 30 * 60_000;
const ROLES = ['user', 'assistant', 'user', 'assistant', 'operator'] as const;

async function insertInBatches<T extends keyof Database>(db: Kysely<Database>, table: T, rows: Record<string, unknown>[], batch: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += batch) {
      await trx.insertInto(table).values(rows.slice(i, i + batch) as never).execute();
    }
  });
}

async function tenant(db: Kysely<Database>, name: string) {
  const services = createServices({ db, clock: systemClock });
  const workspace = await services.workspaces.create(name, 'bench');
  const { secret } = await services.apiKeys.create(systemContext(workspace.id, 'bench'), { name: 'bench', scopes: ['analytics:read', 'chatbots:read', 'chatbots:write', 'conversations:read', 'messages:write', 'leads:read', 'leads:write'] });
  return { workspaceId: workspace.id, key: secret, services };
}

async function conversationsWithMessages(db: Kysely<Database>, workspaceId: string, chatbotId: string, count: number, perConversation: number, spanDays: number) {
  const now = Date.now();
  const batch = 5000;
  for (let start = 0; start < count; start += batch) {
    const conversations: Record<string, unknown>[] = [];
    const messages: Record<string, unknown>[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const createdMs = now - spanDays * DAY + Math.floor(((i + 0.5) / count) * spanDays * DAY);
      const created = new Date(createdMs).toISOString();
      const id = newId('conversation', createdMs);
      const lastMs = createdMs + (perConversation - 1) * 1000;
      const last = new Date(lastMs).toISOString();
      conversations.push({
        id, workspace_id: workspaceId, chatbot_id: chatbotId, status: now - lastMs < IDLE_CLOSE_MS ? 'open' : 'closed', mode: 'agent', channel: 'widget',
        visitor_id: newId('visitor', createdMs), visitor_name: null, visitor_email: null, lead_id: null, message_count: perConversation,
        last_message_at: last, metadata: '{}', created_at: created, updated_at: last,
      });
      for (let m = 0; m < perConversation; m++) {
        const at = createdMs + m * 1000;
        const role = ROLES[m % ROLES.length]!;
        messages.push({
          id: newId('message', at), workspace_id: workspaceId, conversation_id: id, chatbot_id: chatbotId, role,
          content: role === 'user' ? 'When are you open on Saturday?' : 'We are open from 9:00 to 13:00 on Saturdays.',
          author_type: role === 'user' ? 'visitor' : role === 'assistant' ? 'agent' : 'user', author_id: null, created_at: new Date(at).toISOString(),
        });
      }
    }
    await insertInBatches(db, 'conversations', conversations, 1000);
    await insertInBatches(db, 'messages', messages, 2000);
  }
}

/**
 * Generates the benchmark data set with bulk inserts (conversations, messages and leads) and the
 * services (workspaces, keys, agents): a main workspace with the agents and leads, and a large and a
 * small workspace for analytics. Daily counters are rebuilt from the bulk rows.
 */
export async function generate(db: Kysely<Database>, size: DataSize): Promise<DataSet> {
  const main = await tenant(db, 'Bench main');
  const now = Date.now();
  const agents: Record<string, unknown>[] = [];
  for (let i = 0; i < size.agents; i++) {
    const at = new Date(now - (size.agents - i) * 60_000).toISOString();
    agents.push({
      id: newId('chatbot', now - (size.agents - i) * 60_000), workspace_id: main.workspaceId, name: `Agent ${i}`, description: 'Benchmark agent', status: 'active',
      instructions: 'Answer questions about opening hours.', welcome_message: 'Hi!', model: null, temperature: null,
      knowledge: JSON.stringify([{ title: 'Hours', content: 'Open 9 to 5.' }]), lead_capture: '{"enabled":true,"fields":["email"],"prompt":null}',
      allowed_origins: '["https://example.com"]', metadata: '{}', created_at: at, updated_at: at, published_at: at,
    });
  }
  await insertInBatches(db, 'chatbots', agents, 500);
  const chatbotIds = agents.map((a) => a.id as string);

  const leads: Record<string, unknown>[] = [];
  for (let i = 0; i < size.leads; i++) {
    const ms = now - 90 * DAY + Math.floor((i / size.leads) * 90 * DAY);
    const at = new Date(ms).toISOString();
    leads.push({
      id: newId('lead', ms), workspace_id: main.workspaceId, chatbot_id: chatbotIds[i % chatbotIds.length], conversation_id: null, name: `Lead ${i}`,
      email: `lead${i}@example.com`, phone: null, company: null, status: 'new', source: 'widget', custom_fields: '{}', created_at: at, updated_at: at,
    });
  }
  await insertInBatches(db, 'leads', leads, 2000);
  await rebuildDailyStats(db, main.workspaceId);

  // The cursor after 90% of the leads, newest first: walk the keyset the way the API does.
  const deep = Math.floor(size.leads * 0.9);
  const sorted = leads.map((l) => ({ id: l.id as string, created_at: l.created_at as string })).sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
  const { encodeCursor } = await import('../src/http/pagination.js');
  const at = sorted[deep - 1];
  const deepCursor = at ? encodeCursor({ createdAt: at.created_at, id: at.id }, { list: 'leads', order: 'desc' }) : null;

  const large = await tenant(db, 'Bench analytics large');
  const largeBot = await large.services.chatbots.create(systemContext(large.workspaceId), { name: 'Large', instructions: 'x' });
  await conversationsWithMessages(db, large.workspaceId, largeBot.chatbot.id, size.largeConversations, size.largeMessagesPerConversation, 60);
  await rebuildDailyStats(db, large.workspaceId);

  const small = await tenant(db, 'Bench analytics small');
  const smallBot = await small.services.chatbots.create(systemContext(small.workspaceId), { name: 'Small', instructions: 'x' });
  await conversationsWithMessages(db, small.workspaceId, smallBot.chatbot.id, size.smallConversations, size.smallMessagesPerConversation, 60);
  await rebuildDailyStats(db, small.workspaceId);

  const second = await main.services.apiKeys.create(systemContext(main.workspaceId, 'bench'), { name: 'bench 2', scopes: ['chatbots:read'] });
  return {
    main: { workspaceId: main.workspaceId, key: main.key, chatbotIds, deepCursor },
    large: { workspaceId: large.workspaceId, key: large.key },
    small: { workspaceId: small.workspaceId, key: small.key },
    secondKey: second.secret,
  };
}

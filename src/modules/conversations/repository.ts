import { sql, type ExpressionBuilder, type Selectable, type Updateable } from 'kysely';
import { lockedForUpdate } from '../../db/dialect.js';
import { precompiled } from '../../db/precompiled.js';
import { afterKeyset } from '../../db/keyset.js';
import type { ConversationsTable, Database, Db } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';
import { LAST_MESSAGE_PREVIEW } from './schema.js';

/** A conversation row as stored. */
export type ConversationRow = Selectable<ConversationsTable>;

const COLUMNS = [
  'id',
  'workspace_id',
  'chatbot_id',
  'status',
  'mode',
  'channel',
  'visitor_id',
  'visitor_name',
  'visitor_email',
  'lead_id',
  'message_count',
  'last_message_at',
  'metadata',
  'created_at',
  'updated_at',
  'handoff_requested_at',
  'origin',
  'locale',
] as const;

/** What an inbox row adds to a conversation: the lead's contact details and the newest message. */
export interface ConversationSummary {
  lead_name: string | null;
  lead_email: string | null;
  lead_updated_at: string | null;
  last_role: string | null;
  last_content: string | null;
  last_created_at: string | null;
}

/** A conversation row with its summary, as the list, the read and the export select it. */
export type ConversationSummaryRow = ConversationRow & ConversationSummary;

/** A message as the export writes it. */
export interface TranscriptMessage {
  conversation_id: string;
  id: string;
  role: string;
  author_type: string;
  content: string;
  created_at: string;
}

/** Filters of the conversation list. */
export interface ConversationListFilter {
  chatbotId?: string;
  status?: string;
  channel?: string;
  mode?: string;
  /** Lower-cased words that one message of the conversation must all contain. */
  words?: string[];
  /** Waiting for a person: a handoff was requested, and the conversation is open and still in agent mode. */
  handoff?: 'requested';
  createdAfter?: string;
  createdBefore?: string;
}

const QUALIFIED = COLUMNS.map((column) => `conversations.${column}` as const);

/** Escapes LIKE's wildcards in a word (the pattern is then used with `escape '\\'`). */
function containing(word: string): string {
  return `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Conversations with their summary in one statement (no query per row): the lead by its primary key, and the
 * newest message's columns as scalar subqueries, each one probe of the (conversation_id, created_at, id) index.
 * (A join on "the newest message's id" reads well but PostgreSQL plans it as a nested loop over all messages.)
 */
function withSummary(db: Db, workspaceId: string) {
  const newest = <C extends 'role' | 'content' | 'created_at'>(eb: ExpressionBuilder<Database, 'conversations'>, column: C) =>
    eb
      .selectFrom('messages')
      .select(`messages.${column}` as const)
      .whereRef('messages.conversation_id', '=', 'conversations.id')
      .whereRef('messages.workspace_id', '=', 'conversations.workspace_id')
      .orderBy('messages.created_at', 'desc')
      .orderBy('messages.id', 'desc')
      .limit(1);
  return db
    .selectFrom('conversations')
    .leftJoin('leads', (join) => join.onRef('leads.id', '=', 'conversations.lead_id').onRef('leads.workspace_id', '=', 'conversations.workspace_id'))
    .select((eb) => [
      ...QUALIFIED,
      'leads.name as lead_name',
      'leads.email as lead_email',
      'leads.updated_at as lead_updated_at',
      newest(eb, 'role').as('last_role'),
      sql<string | null>`substr((${newest(eb, 'content')}), 1, ${sql.lit(LAST_MESSAGE_PREVIEW)})`.as('last_content'),
      newest(eb, 'created_at').as('last_created_at'),
    ])
    .where('conversations.workspace_id', '=', workspaceId);
}

// Reads by id are on most requests' path: built and compiled once.
const findById = precompiled((db, workspaceId: string, id: string) =>
  db.selectFrom('conversations').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id),
);

/** SQL for conversations; every query carries the workspace id. */
export const conversationRepository = {
  /** Whether any conversation of the workspace started in the widget on a website (not the hosted page). */
  async anyFromWebsite(db: Db, workspaceId: string): Promise<boolean> {
    const row = await db.selectFrom('conversations').select('id').where('workspace_id', '=', workspaceId).where('origin', 'is not', null).limit(1).executeTakeFirst();
    return row !== undefined;
  },

  /** Stores a new conversation. */
  async insert(db: Db, row: ConversationRow): Promise<void> {
    await db.insertInto('conversations').values(row).execute();
  },

  /** One conversation of a workspace; `forUpdate` locks its row for a read-modify-write. */
  async find(db: Db, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<ConversationRow | undefined> {
    if (!options.forUpdate) return findById(db, workspaceId, id);
    return lockedForUpdate(db, db.selectFrom('conversations').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
  },

  /** One conversation of a workspace with its summary (the API's read). */
  async findSummary(db: Db, workspaceId: string, id: string): Promise<ConversationSummaryRow | undefined> {
    return withSummary(db, workspaceId).where('conversations.id', '=', id).executeTakeFirst();
  },

  /** One page of a workspace's conversations with their summaries (limit + 1 rows); the export pages through it too. */
  async list(db: Db, workspaceId: string, filter: ConversationListFilter, page: PageRequest): Promise<ConversationSummaryRow[]> {
    let query = withSummary(db, workspaceId);
    if (filter.chatbotId) query = query.where('conversations.chatbot_id', '=', filter.chatbotId);
    if (filter.status) query = query.where('conversations.status', '=', filter.status);
    if (filter.channel) query = query.where('conversations.channel', '=', filter.channel);
    if (filter.mode) query = query.where('conversations.mode', '=', filter.mode);
    if (filter.handoff === 'requested') {
      query = query.where('conversations.handoff_requested_at', 'is not', null).where('conversations.mode', '=', 'agent').where('conversations.status', '=', 'open');
    }
    if (filter.createdAfter) query = query.where('conversations.created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('conversations.created_at', '<', filter.createdBefore);
    const words = filter.words ?? [];
    if (words.length > 0) {
      // Substring search (what the lead search does too), the same on SQLite and PostgreSQL. A leading
      // wildcard can use no b-tree index, and none is added: the scan walks the workspace's conversations in
      // keyset order through (workspace_id, created_at, id) and probes each one's messages through
      // (conversation_id, created_at, id), stopping at the first message that matches, so a page costs
      // the conversations it passes over, not the workspace's whole message table. A full-text index
      // (FTS5 / tsvector, as the knowledge search has) is the step up if inboxes grow past that.
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('messages as m')
            .select(sql.lit(1).as('one'))
            .whereRef('m.conversation_id', '=', 'conversations.id')
            .where('m.workspace_id', '=', workspaceId)
            .where((eb) => eb.and(words.map((word) => eb(sql`lower(${sql.ref('m.content')})`, 'like', sql`${containing(word)} escape '\\'`)))),
        ),
      );
    }
    const keyset = afterKeyset(page, 'conversations');
    if (keyset) query = query.where(keyset);
    return query.orderBy('conversations.created_at', page.order).orderBy('conversations.id', page.order).limit(page.limit + 1).execute();
  },

  /** The messages of some conversations of a workspace (one export page), each conversation's oldest first. */
  async transcripts(db: Db, workspaceId: string, conversationIds: readonly string[]): Promise<TranscriptMessage[]> {
    if (conversationIds.length === 0) return [];
    return db
      .selectFrom('messages')
      .select(['conversation_id', 'id', 'role', 'author_type', 'content', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where('conversation_id', 'in', conversationIds)
      .orderBy('conversation_id')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /** Applies changes to one conversation of a workspace. */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<ConversationsTable>): Promise<void> {
    await db.updateTable('conversations').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};

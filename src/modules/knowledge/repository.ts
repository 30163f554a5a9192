import { fullTextHits } from '../../db/dialect.js';
import type { Db } from '../../db/schema.js';
import { searchTerms } from './terms.js';

/** A knowledge entry of an agent, as the agent's `knowledge` list holds it. */
export interface KnowledgeEntry {
  title: string;
  content: string;
}

/** A knowledge entry found by a search, best first. */
export interface KnowledgeHit extends KnowledgeEntry {
  /** Index of the entry in the agent's `knowledge` list. */
  position: number;
}

/** SQL for the knowledge search index; every query carries the workspace id. */
export const knowledgeRepository = {
  /** Makes the index hold exactly `entries` for one agent (call in the transaction that writes its `knowledge`). */
  async replace(trx: Db, workspaceId: string, chatbotId: string, entries: readonly KnowledgeEntry[]): Promise<void> {
    await trx.deleteFrom('knowledge_entries').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
    if (entries.length === 0) return;
    await trx
      .insertInto('knowledge_entries')
      .values(entries.map((entry, position) => ({ workspace_id: workspaceId, chatbot_id: chatbotId, position, title: entry.title, content: entry.content })))
      .execute();
  },

  /**
   * The agent's entries that best match `text` (any of its non-stopword words, stemmed), best first; none
   * when the text has no such word. Visitor text never reaches the query language as syntax.
   */
  async search(db: Db, workspaceId: string, chatbotId: string, text: string, limit: number): Promise<KnowledgeHit[]> {
    const terms = searchTerms(text);
    if (terms.length === 0 || limit <= 0) return [];
    return db
      .selectFrom('knowledge_entries as e')
      .innerJoin(fullTextHits(db, 'knowledge_entries', terms), 'hits.id', 'e.id')
      .select(['e.position', 'e.title', 'e.content'])
      .where('e.workspace_id', '=', workspaceId)
      .where('e.chatbot_id', '=', chatbotId)
      .orderBy('hits.rank')
      .orderBy('e.position')
      .limit(limit)
      .execute();
  },
};

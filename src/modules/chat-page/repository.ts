import type { Db } from '../../db/schema.js';

/** What the hosted chat page needs to know about an agent. */
export interface PublicChatbot {
  id: string;
  name: string;
  status: string;
  /** The language of the widget's own words: 'auto' or en, es, fr, de, pt. */
  language: string;
  /** The widget's look (JSON; '{}' = the defaults). */
  appearance: string;
}

/** SQL of the hosted chat page. */
export const chatPageRepository = {
  /**
   * An agent by id alone: the page is public and its URL carries only the (unguessable, globally unique)
   * agent id. Only the name, status, widget language and look are read; nothing else of the agent reaches the page.
   */
  async findChatbot(db: Db, id: string): Promise<PublicChatbot | undefined> {
    return db.selectFrom('chatbots').select(['id', 'name', 'status', 'language', 'appearance']).where('id', '=', id).executeTakeFirst();
  },
};

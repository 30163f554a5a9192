import type { Db } from '../../db/schema.js';

/** SQL for the parts of analytics not kept in the daily counters. */
export const analyticsRepository = {
  /** AI Agents by current status. */
  async chatbotsByStatus(db: Db, workspaceId: string, chatbotId: string | null): Promise<{ status: string; count: number }[]> {
    let query = db
      .selectFrom('chatbots')
      .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
      .where('workspace_id', '=', workspaceId);
    if (chatbotId) query = query.where('id', '=', chatbotId);
    const rows = await query.groupBy('status').execute();
    return rows.map((r) => ({ status: r.status, count: Number(r.count) }));
  },
};

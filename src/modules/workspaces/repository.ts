import type { Db } from '../../db/schema.js';

/** A workspace as the rest of the code sees it (the audit chain head stays with the audit writer). */
export interface WorkspaceRow {
  id: string;
  name: string;
  created_at: string;
}

/** SQL for workspaces. */
export const workspaceRepository = {
  /** Stores a new workspace. */
  async insert(db: Db, row: WorkspaceRow): Promise<void> {
    await db.insertInto('workspaces').values(row).execute();
  },

  /** One workspace by id. */
  async find(db: Db, id: string): Promise<WorkspaceRow | undefined> {
    return db.selectFrom('workspaces').select(['id', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
  },
};

import type { Db, WorkspacesTable } from '../../db/schema.js';

/** SQL for workspaces. */
export const workspaceRepository = {
  /** Stores a new workspace. */
  async insert(db: Db, row: WorkspacesTable): Promise<void> {
    await db.insertInto('workspaces').values(row).execute();
  },

  /** One workspace by id. */
  async find(db: Db, id: string): Promise<WorkspacesTable | undefined> {
    return db.selectFrom('workspaces').select(['id', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
  },
};

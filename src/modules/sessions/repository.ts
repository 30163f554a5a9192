import type { Db, SessionsTable } from '../../db/schema.js';

/** SQL for dashboard sessions (looked up by the hash of the cookie token). */
export const sessionRepository = {
  /** Stores a new session. */
  async insert(db: Db, row: SessionsTable): Promise<void> {
    await db.insertInto('sessions').values(row).execute();
  },

  /** A session by id (the token's hash) that has not expired. */
  async findLive(db: Db, id: string, now: string): Promise<SessionsTable | undefined> {
    return db
      .selectFrom('sessions')
      .select(['id', 'user_id', 'workspace_id', 'csrf_token', 'created_at', 'expires_at', 'last_seen_at'])
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /** Slides the expiry of an active session forward. */
  async touch(db: Db, id: string, lastSeenAt: string, expiresAt: string): Promise<void> {
    await db.updateTable('sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id', '=', id).execute();
  },

  /** Moves a session to another workspace of its user. */
  async setWorkspace(db: Db, id: string, workspaceId: string): Promise<void> {
    await db.updateTable('sessions').set({ workspace_id: workspaceId }).where('id', '=', id).execute();
  },

  /** Ends one session. */
  async delete(db: Db, id: string): Promise<void> {
    await db.deleteFrom('sessions').where('id', '=', id).execute();
  },

  /** Ends a user's sessions that work in a workspace (after their removal from it). */
  async deleteForMember(db: Db, workspaceId: string, userId: string): Promise<void> {
    await db.deleteFrom('sessions').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  },

  /** Ends every session of a user, but the one kept (the session that changed the password), if any. */
  async deleteForUser(db: Db, userId: string, keepId: string | null): Promise<void> {
    let query = db.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepId !== null) query = query.where('id', '!=', keepId);
    await query.execute();
  },

  /** Deletes expired sessions. */
  async deleteExpired(db: Db, now: string): Promise<void> {
    await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  },
};

import type { Db, InvitationsTable } from '../../db/schema.js';

const COLUMNS = ['id', 'token_hash', 'workspace_id', 'role', 'email', 'created_by', 'created_at', 'expires_at', 'accepted_at', 'accepted_by', 'revoked_at', 'revoked_by'] as const;

/** SQL for invitation links (found by the hash of their token). */
export const invitationRepository = {
  /** Stores a new invitation. */
  async insert(db: Db, row: InvitationsTable): Promise<void> {
    await db.insertInto('invitations').values(row).execute();
  },

  /** An invitation by the hash of its token. */
  async findByTokenHash(db: Db, tokenHash: string): Promise<InvitationsTable | undefined> {
    return db.selectFrom('invitations').select(COLUMNS).where('token_hash', '=', tokenHash).executeTakeFirst();
  },

  /** An invitation of a workspace by id. */
  async find(db: Db, workspaceId: string, id: string): Promise<InvitationsTable | undefined> {
    return db.selectFrom('invitations').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  },

  /** Revokes an unused invitation, once. Returns whether this call did it. */
  async revoke(db: Db, workspaceId: string, id: string, by: string, at: string): Promise<boolean> {
    const result = await db
      .updateTable('invitations')
      .set({ revoked_at: at, revoked_by: by })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Marks an invitation used, once. Returns whether this call did it (a second use finds it taken). */
  async accept(db: Db, id: string, userId: string, at: string): Promise<boolean> {
    const result = await db
      .updateTable('invitations')
      .set({ accepted_at: at, accepted_by: userId })
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Open (unused, unrevoked, unexpired) invitations of a workspace, newest first. */
  async listOpen(db: Db, workspaceId: string, now: string): Promise<InvitationsTable[]> {
    return db
      .selectFrom('invitations')
      .select(COLUMNS)
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .execute();
  },
};

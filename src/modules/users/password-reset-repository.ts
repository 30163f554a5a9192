import type { Db, PasswordResetsTable } from '../../db/schema.js';

/**
 * SQL for password reset links. Keyed by the token's hash and the user, not a workspace: an account spans
 * workspaces, and a reset changes the account.
 */
export const passwordResetRepository = {
  /** Stores a new link. */
  async insert(db: Db, row: Omit<PasswordResetsTable, 'used_at'>): Promise<void> {
    await db.insertInto('password_resets').values({ ...row, used_at: null }).execute();
  },

  /** The user a link resets, when it is unused and not expired at `now`. */
  async findUsable(db: Db, tokenHash: string, now: string): Promise<{ user_id: string } | undefined> {
    return db
      .selectFrom('password_resets')
      .select('user_id')
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /**
   * Marks a usable link used; false when it was not usable any more (a concurrent reset used it first), so a
   * link resets a password once even when two requests race.
   */
  async use(db: Db, tokenHash: string, userId: string, now: string): Promise<boolean> {
    const result = await db
      .updateTable('password_resets')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Ends the user's other outstanding links (a new password makes older links pointless). */
  async useAllOf(db: Db, userId: string, now: string): Promise<void> {
    await db.updateTable('password_resets').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
  },

  /** Deletes links expired before `before` (used or not). */
  async deleteExpired(db: Db, before: string): Promise<void> {
    await db.deleteFrom('password_resets').where('expires_at', '<=', before).execute();
  },
};

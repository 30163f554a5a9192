import type { Kysely } from 'kysely';

/**
 * Invitation links can be revoked (issue 29): when and by whom. Expiry was already stored (`expires_at`);
 * its length now comes from INVITATION_TTL_DAYS.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('invitations').addColumn('revoked_at', 'text').execute();
  await db.schema.alterTable('invitations').addColumn('revoked_by', 'text').execute();
}

/** Drops the revocation columns (revoked links become open again: run it only to go back a version). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('invitations').dropColumn('revoked_by').execute();
  await db.schema.alterTable('invitations').dropColumn('revoked_at').execute();
}

import type { Insertable } from 'kysely';
import type { Db, MembershipsTable, UsersTable } from '../../db/schema.js';

/** A member's role in a workspace. */
export type Role = MembershipsTable['role'];

/** A user without the password hash. */
export interface UserRow {
  id: string;
  email: string;
  created_at: string;
}

/** A membership joined with its user (the members list) or its workspace (the switcher). */
export interface MemberRow {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
}

/** A workspace the user belongs to, with the role held there. */
export interface UserWorkspaceRow {
  workspace_id: string;
  name: string;
  role: Role;
}

const USER_COLUMNS = ['id', 'email', 'created_at'] as const;

/** SQL for users and memberships. The password hash is read only by `findCredentials`. */
export const userRepository = {
  /** Stores a new user. */
  async insert(db: Db, row: UsersTable): Promise<void> {
    await db.insertInto('users').values(row).execute();
  },

  /** Whether any account exists at all (a first run has none). */
  async anyExist(db: Db): Promise<boolean> {
    return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
  },

  /** A user by (lowercased) email with the password hash, for sign-in. */
  async findCredentials(db: Db, email: string): Promise<UsersTable | undefined> {
    return db.selectFrom('users').select(['id', 'email', 'password_hash', 'created_at']).where('email', '=', email).executeTakeFirst();
  },

  /** The password hash of a user, for checking the current password before a change. */
  async passwordHash(db: Db, id: string): Promise<string | undefined> {
    return (await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst())?.password_hash;
  },

  /** Replaces a user's password hash. */
  async setPasswordHash(db: Db, id: string, passwordHash: string): Promise<void> {
    await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
  },

  /** A user by (lowercased) email, without the password hash. */
  async findByEmail(db: Db, email: string): Promise<UserRow | undefined> {
    return db.selectFrom('users').select(USER_COLUMNS).where('email', '=', email).executeTakeFirst();
  },

  /** A user by id. */
  async find(db: Db, id: string): Promise<UserRow | undefined> {
    return db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst();
  },

  /** Adds a user to a workspace. */
  async insertMembership(db: Db, row: Insertable<MembershipsTable>): Promise<void> {
    await db.insertInto('memberships').values(row).execute();
  },

  /** The user's role in a workspace, if a member. */
  async role(db: Db, workspaceId: string, userId: string): Promise<Role | undefined> {
    const row = await db
      .selectFrom('memberships')
      .select('role')
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.role;
  },

  /** Every workspace of a user, oldest membership first. */
  async workspacesOf(db: Db, userId: string): Promise<UserWorkspaceRow[]> {
    return db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select(['memberships.workspace_id', 'workspaces.name', 'memberships.role'])
      .where('memberships.user_id', '=', userId)
      .orderBy('memberships.created_at', 'asc')
      .orderBy('memberships.workspace_id', 'asc')
      .execute();
  },

  /** The members of a workspace, oldest first. */
  async members(db: Db, workspaceId: string): Promise<MemberRow[]> {
    return db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['memberships.user_id', 'users.email', 'memberships.role', 'memberships.created_at'])
      .where('memberships.workspace_id', '=', workspaceId)
      .orderBy('memberships.created_at', 'asc')
      .orderBy('memberships.user_id', 'asc')
      .execute();
  },

  /** How many owners a workspace has (it must keep one). */
  async ownerCount(db: Db, workspaceId: string): Promise<number> {
    const row = await db
      .selectFrom('memberships')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('workspace_id', '=', workspaceId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  },

  /** Changes a member's role. */
  async setRole(db: Db, workspaceId: string, userId: string, role: Role): Promise<void> {
    await db.updateTable('memberships').set({ role }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  },

  /** Removes a member from a workspace. */
  async removeMembership(db: Db, workspaceId: string, userId: string): Promise<void> {
    await db.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  },
};

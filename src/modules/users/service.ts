import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { systemContext, type OperationContext, type RequestContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { AuditWriter } from '../audit/writer.js';
import { sessionRepository } from '../sessions/repository.js';
import { workspaceRepository } from '../workspaces/repository.js';
import type { SignupPolicy } from '../../config.js';
import { tryTransactionLock } from '../../db/dialect.js';
import { hashPassword, passwordMatches, verifyDecoy } from './passwords.js';
import { passwordProblem } from './password-policy.js';
import { userRepository, type MemberRow, type Role, type UserRow, type UserWorkspaceRow } from './repository.js';

/** The roles of a workspace, most powerful first. */
export const ROLES = ['owner', 'admin', 'member'] as const;

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 };

/** True when `role` is at least `needed` (owner ≥ admin ≥ member). */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** A member of a workspace as the dashboard shows it. */
export interface MemberView {
  object: 'member';
  user_id: string;
  email: string;
  role: Role;
  joined_at: string;
}

/** Input of sign-up. */
export interface SignUpInput {
  email: string;
  password: string;
  workspaceName: string;
}

/**
 * Who sets a new password: the user in a session (kept, the others end), the user through an emailed reset
 * link (every session ends), or the operator (every session ends).
 */
export type PasswordChanger = { type: 'user'; sessionId: string; request: RequestContext } | { type: 'reset'; request: RequestContext } | { type: 'operator'; name: string };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Lowercased, trimmed email, or a 400 naming the field. */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) {
    throw AppError.validation('Enter a valid email address.', [{ pointer: '/email', message: 'must be an email address' }]);
  }
  return email;
}

/** A 400 naming the field when a new password is too short, too long or among the most common ones. */
export function checkPassword(password: string, pointer = '/password'): void {
  const problem = passwordProblem(password);
  if (problem) throw AppError.validation(`The password ${problem}.`, [{ pointer, message: problem }]);
}

function presentMember(row: MemberRow): MemberView {
  return { object: 'member', user_id: row.user_id, email: row.email, role: row.role, joined_at: row.created_at };
}

/** The operation context of a user acting in a workspace (dashboard writes are audited with it). */
export function userContext(user: { id: string; email: string }, workspaceId: string, request: RequestContext): OperationContext {
  return { actor: { type: 'user', id: user.id, name: user.email, workspaceId }, request };
}

/** Dashboard users: sign-up, credentials, memberships and roles. */
export function createUserService(db: Kysely<Database>, clock: Clock, audit: AuditWriter) {
  /** Creates a user row inside `trx`, or 409 when the email is taken. */
  async function insertUser(trx: Transaction<Database>, email: string, password: string): Promise<UserRow> {
    checkPassword(password);
    if (await userRepository.findCredentials(trx, email)) {
      throw new AppError('email_taken', 'An account with this email already exists: sign in instead.');
    }
    const now = clock.now();
    const row = { id: newId('user', now.getTime()), email, password_hash: await hashPassword(password), created_at: now.toISOString() };
    await userRepository.insert(trx, row);
    return { id: row.id, email: row.email, created_at: row.created_at };
  }

  /**
   * Stores an already hashed password inside `trx`: ends the user's sessions (but the changing one) and records
   * `user.password_changed` in each of their workspaces.
   */
  async function writePassword(trx: Transaction<Database>, userId: string, passwordHash: string, by: PasswordChanger): Promise<void> {
    const user = await userRepository.find(trx, userId);
    if (!user) throw AppError.notFound('user', userId);
    // Workspace rows are locked by the audit chain: always in id order, so two changes cannot deadlock.
    const workspaceIds = (await userRepository.workspacesOf(trx, userId)).map((w) => w.workspace_id).sort();
    if (workspaceIds.length === 0) throw new AppError('invalid_request', 'This account belongs to no workspace: there is no audit log to record the change in.');
    await userRepository.setPasswordHash(trx, userId, passwordHash);
    await sessionRepository.deleteForUser(trx, userId, by.type === 'user' ? by.sessionId : null);
    const changes = { sessions_ended: { before: null, after: by.type === 'user' ? 'others' : 'all' }, ...(by.type === 'reset' ? { via: { before: null, after: 'reset_link' } } : {}) };
    for (const workspaceId of workspaceIds) {
      const ctx = by.type === 'operator' ? systemContext(workspaceId, by.name) : userContext(user, workspaceId, by.request);
      await audit.record(trx, ctx, { action: 'user.password_changed', target: { type: 'user', id: userId }, changes });
    }
  }

  return {
    /**
     * An account with a new workspace: the user, the workspace and the owner membership, audited together.
     * Under `first-only` only while the instance has no account at all (afterwards invitations create them).
     */
    async signUp(input: SignUpInput, request: RequestContext, policy: SignupPolicy): Promise<{ user: UserRow; workspaceId: string }> {
      const email = normalizeEmail(input.email);
      checkPassword(input.password);
      const name = input.workspaceName.trim();
      if (name.length === 0 || name.length > 200) {
        throw AppError.validation('The workspace name must be 1 to 200 characters.', [{ pointer: '/workspace_name', message: 'must be 1 to 200 characters' }]);
      }
      return inTransaction(db, {}, async (trx) => {
        // PostgreSQL: two first sign-ups at once must not both find the instance empty.
        if (policy === 'first-only' && (!(await tryTransactionLock(trx, 'first-sign-up')) || (await userRepository.anyExist(trx)))) {
          throw new AppError('signup_closed', 'Sign-up is closed on this instance: ask an owner or admin of a workspace for an invitation link.');
        }
        const user = await insertUser(trx, email, input.password);
        const at = clock.now().toISOString();
        const workspaceId = newId('workspace', Date.parse(at));
        await workspaceRepository.insert(trx, { id: workspaceId, name, created_at: at });
        await userRepository.insertMembership(trx, { user_id: user.id, workspace_id: workspaceId, role: 'owner', created_at: at });
        const ctx = userContext(user, workspaceId, request);
        await audit.record(trx, ctx, { action: 'workspace.created', target: { type: 'workspace', id: workspaceId }, changes: { name: { before: null, after: name } } });
        await audit.record(trx, ctx, {
          action: 'member.added',
          target: { type: 'user', id: user.id },
          changes: { email: { before: null, after: email }, role: { before: null, after: 'owner' } },
        });
        return { user, workspaceId };
      });
    },

    /** Creates a user inside a caller's transaction (sign-up through an invitation). */
    insertUser,

    /** The user behind an email and password, or 401 (the same answer and time for an unknown email). */
    async verifyCredentials(rawEmail: string, password: string): Promise<UserRow> {
      const email = rawEmail.trim().toLowerCase();
      const found = await userRepository.findCredentials(db, email);
      if (!found) {
        await verifyDecoy(password);
      } else if (await passwordMatches(found.password_hash, password)) {
        return { id: found.id, email: found.email, created_at: found.created_at };
      }
      throw new AppError('invalid_credentials', 'The email or password is wrong.');
    },

    /**
     * Sets a user's password: ends their sessions (but the changing one) and records `user.password_changed`
     * in each of their workspaces, all in one transaction. A user changing their own must give the current one.
     */
    async setPassword(userId: string, newPassword: string, by: PasswordChanger, currentPassword?: string): Promise<void> {
      checkPassword(newPassword, by.type === 'user' ? '/new_password' : '/password');
      // Both argon2 computations happen before the transaction: a write transaction never waits on hashing.
      const stored = await userRepository.passwordHash(db, userId);
      if (stored === undefined) throw AppError.notFound('user', userId);
      if (by.type === 'user' && !(await passwordMatches(stored, currentPassword ?? ''))) {
        throw AppError.validation('The current password is wrong.', [{ pointer: '/current_password', message: 'is not your current password' }]);
      }
      const passwordHash = await hashPassword(newPassword);
      await inTransaction(db, {}, (trx) => writePassword(trx, userId, passwordHash, by));
    },

    writePassword,

    /** A user by email (any case), or undefined. */
    async findByEmail(rawEmail: string): Promise<UserRow | undefined> {
      return userRepository.findByEmail(db, rawEmail.trim().toLowerCase());
    },

    /** Whether any account exists at all (a first run has none). */
    async anyExist(): Promise<boolean> {
      return userRepository.anyExist(db);
    },

    /** Every workspace the user belongs to. */
    async workspacesOf(userId: string): Promise<UserWorkspaceRow[]> {
      return userRepository.workspacesOf(db, userId);
    },

    /** The user's role in a workspace, if a member. */
    async roleIn(workspaceId: string, userId: string): Promise<Role | undefined> {
      return userRepository.role(db, workspaceId, userId);
    },

    /** Members of the actor's workspace. */
    async members(ctx: OperationContext): Promise<MemberView[]> {
      return (await userRepository.members(db, ctx.actor.workspaceId)).map(presentMember);
    },

    /** Changes a member's role. Only owners grant or take away the owner role; the last owner stays. */
    async changeRole(ctx: OperationContext, actorRole: Role, userId: string, role: Role): Promise<MemberView> {
      return inTransaction(db, ctx, async (trx) => {
        const current = isId('user', userId) ? await userRepository.role(trx, ctx.actor.workspaceId, userId) : undefined;
        if (!current) throw AppError.notFound('member', userId);
        if ((current === 'owner' || role === 'owner') && actorRole !== 'owner') {
          throw new AppError('insufficient_role', 'Only an owner can grant or change the owner role.');
        }
        if (current === 'owner' && role !== 'owner' && (await userRepository.ownerCount(trx, ctx.actor.workspaceId)) <= 1) {
          throw new AppError('last_owner', 'This is the only owner: make someone else an owner first.');
        }
        if (current !== role) {
          await userRepository.setRole(trx, ctx.actor.workspaceId, userId, role);
          await audit.record(trx, ctx, { action: 'member.role_changed', target: { type: 'user', id: userId }, changes: { role: { before: current, after: role } } });
        }
        const member = (await userRepository.members(trx, ctx.actor.workspaceId)).find((m) => m.user_id === userId)!;
        return presentMember(member);
      });
    },

    /** Removes a member (and ends their sessions in this workspace). The last owner cannot be removed. */
    async removeMember(ctx: OperationContext, actorRole: Role, userId: string): Promise<void> {
      await inTransaction(db, ctx, async (trx) => {
        const current = isId('user', userId) ? await userRepository.role(trx, ctx.actor.workspaceId, userId) : undefined;
        if (!current) throw AppError.notFound('member', userId);
        if (current === 'owner' && actorRole !== 'owner') throw new AppError('insufficient_role', 'Only an owner can remove an owner.');
        if (current === 'owner' && (await userRepository.ownerCount(trx, ctx.actor.workspaceId)) <= 1) {
          throw new AppError('last_owner', 'This is the only owner: make someone else an owner first.');
        }
        await userRepository.removeMembership(trx, ctx.actor.workspaceId, userId);
        await sessionRepository.deleteForMember(trx, ctx.actor.workspaceId, userId);
        await audit.record(trx, ctx, { action: 'member.removed', target: { type: 'user', id: userId }, changes: { role: { before: current, after: null } } });
      });
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;

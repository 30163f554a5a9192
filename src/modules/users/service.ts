import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext, RequestContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { AuditWriter } from '../audit/writer.js';
import { sessionRepository } from '../sessions/repository.js';
import { workspaceRepository } from '../workspaces/repository.js';
import { hashPassword, passwordMatches, verifyDecoy } from './passwords.js';
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

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Lowercased, trimmed email, or a 400 naming the field. */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) {
    throw AppError.validation('Enter a valid email address.', [{ pointer: '/email', message: 'must be an email address' }]);
  }
  return email;
}

function checkPassword(password: string): void {
  if (password.length < 8 || password.length > 256) {
    throw AppError.validation('The password must be 8 to 256 characters.', [{ pointer: '/password', message: 'must be 8 to 256 characters' }]);
  }
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

  return {
    /** The first account of a new workspace: the user, the workspace and the owner membership, audited together. */
    async signUp(input: SignUpInput, request: RequestContext): Promise<{ user: UserRow; workspaceId: string }> {
      const email = normalizeEmail(input.email);
      checkPassword(input.password);
      const name = input.workspaceName.trim();
      if (name.length === 0 || name.length > 200) {
        throw AppError.validation('The workspace name must be 1 to 200 characters.', [{ pointer: '/workspace_name', message: 'must be 1 to 200 characters' }]);
      }
      return inTransaction(db, {}, async (trx) => {
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

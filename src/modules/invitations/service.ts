import type { Kysely, Transaction } from 'kysely';
import type { Database, Db, InvitationsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext, RequestContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { newToken, tokenHash } from '../../lib/tokens.js';
import type { AuditWriter } from '../audit/writer.js';
import { userRepository, type Role, type UserRow } from '../users/repository.js';
import { normalizeEmail, userContext, type UserService } from '../users/service.js';
import { workspaceRepository } from '../workspaces/repository.js';
import { invitationRepository } from './repository.js';

/** How long an invitation link stays valid. */
const INVITATION_TTL_MS = 7 * 86_400_000;

/** An invitation as shown to the members who manage them (never the token). */
export interface InvitationView {
  id: string;
  object: 'invitation';
  role: Role;
  email: string | null;
  created_by: string;
  created_at: string;
  expires_at: string;
}

/** What the holder of a link sees before accepting it. */
export interface InvitationPreview {
  workspace_name: string;
  role: Role;
  email: string | null;
}

function present(row: InvitationsTable): InvitationView {
  return { id: row.id, object: 'invitation', role: row.role, email: row.email, created_by: row.created_by, created_at: row.created_at, expires_at: row.expires_at };
}

/** One-time invitation links: an owner or admin creates one with a role; its holder joins the workspace once. */
export function createInvitationService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, users: UserService) {
  async function usable(executor: Db, token: string): Promise<InvitationsTable> {
    const row = token.length >= 20 && token.length <= 100 ? await invitationRepository.findByTokenHash(executor, tokenHash(token)) : undefined;
    if (!row) throw AppError.notFound('invitation', 'link');
    if (row.accepted_at !== null || row.expires_at <= clock.now().toISOString()) {
      throw new AppError('invitation_invalid', 'This invitation link was already used or has expired: ask for a new one.');
    }
    return row;
  }

  /** Adds the user to the invitation's workspace inside `trx`, audited with the user as actor. */
  async function join(trx: Transaction<Database>, invitation: InvitationsTable, user: UserRow, request: RequestContext) {
    if (!(await invitationRepository.accept(trx, invitation.id, user.id, clock.now().toISOString()))) {
      throw new AppError('invitation_invalid', 'This invitation link was already used: ask for a new one.');
    }
    const ctx = userContext(user, invitation.workspace_id, request);
    const existing = await userRepository.role(trx, invitation.workspace_id, user.id);
    if (existing) return;
    await userRepository.insertMembership(trx, { user_id: user.id, workspace_id: invitation.workspace_id, role: invitation.role, created_at: clock.now().toISOString() });
    await audit.record(trx, ctx, {
      action: 'member.added',
      target: { type: 'user', id: user.id },
      changes: { email: { before: null, after: user.email }, role: { before: null, after: invitation.role }, invitation_id: { before: null, after: invitation.id } },
    });
  }

  return {
    /** Creates a link for a role (the token is returned this once). Only owners invite owners. */
    async create(ctx: OperationContext, actorRole: Role, input: { role: Role; email?: string | null }): Promise<{ invitation: InvitationView; token: string }> {
      if (input.role === 'owner' && actorRole !== 'owner') throw new AppError('insufficient_role', 'Only an owner can invite an owner.');
      const email = input.email ? normalizeEmail(input.email) : null;
      const token = newToken();
      const now = clock.now();
      const row: InvitationsTable = {
        id: newId('invitation', now.getTime()),
        token_hash: tokenHash(token),
        workspace_id: ctx.actor.workspaceId,
        role: input.role,
        email,
        created_by: `${ctx.actor.type}:${ctx.actor.id}`,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + INVITATION_TTL_MS).toISOString(),
        accepted_at: null,
        accepted_by: null,
      };
      await inTransaction(db, ctx, async (trx) => {
        await invitationRepository.insert(trx, row);
        await audit.record(trx, ctx, {
          action: 'invitation.created',
          target: { type: 'invitation', id: row.id },
          changes: { role: { before: null, after: row.role }, email: { before: null, after: email }, expires_at: { before: null, after: row.expires_at } },
        });
      });
      return { invitation: present(row), token };
    },

    /** Open invitations of the actor's workspace. */
    async listOpen(ctx: OperationContext): Promise<InvitationView[]> {
      return (await invitationRepository.listOpen(db, ctx.actor.workspaceId, clock.now().toISOString())).map(present);
    },

    /** What a link offers (workspace and role), for the accept page. */
    async preview(token: string): Promise<InvitationPreview> {
      const row = await usable(db, token);
      const workspace = await workspaceRepository.find(db, row.workspace_id);
      return { workspace_name: workspace?.name ?? '', role: row.role, email: row.email };
    },

    /** A signed-in user accepts a link; returns the workspace joined. */
    async accept(token: string, user: { id: string; email: string }, request: RequestContext): Promise<string> {
      return inTransaction(db, {}, async (trx) => {
        const invitation = await usable(trx, token);
        await join(trx, invitation, { ...user, created_at: '' }, request);
        return invitation.workspace_id;
      });
    },

    /** Signs up a new user through a link: the account and the membership are created together. */
    async signUp(token: string, input: { email: string; password: string }, request: RequestContext): Promise<{ user: UserRow; workspaceId: string }> {
      return inTransaction(db, {}, async (trx) => {
        const invitation = await usable(trx, token);
        const user = await users.insertUser(trx, normalizeEmail(input.email), input.password);
        await join(trx, invitation, user, request);
        return { user, workspaceId: invitation.workspace_id };
      });
    },
  };
}

export type InvitationService = ReturnType<typeof createInvitationService>;

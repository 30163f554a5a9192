import type { Kysely, Transaction } from 'kysely';
import type { Database, Db, InvitationsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext, RequestContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { newToken, tokenHash } from '../../lib/tokens.js';
import type { AuditWriter } from '../audit/writer.js';
import { userRepository, type Role, type UserRow } from '../users/repository.js';
import { normalizeEmail, roleAtLeast, userContext, type UserService } from '../users/service.js';
import { workspaceRepository } from '../workspaces/repository.js';
import { invitationRepository } from './repository.js';
import type { InvitationCreated } from '../mail/invitations.js';

const DAY_MS = 86_400_000;

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

/** Whether a member with `granter`'s role may invite (or revoke an invitation) with `role`: admins and owners; owners only by owners. */
export function mayGrant(granter: Role | undefined, role: Role): boolean {
  return granter !== undefined && roleAtLeast(granter, 'admin') && (role !== 'owner' || granter === 'owner');
}

/** The creator's current role in the invitation's workspace (dashboard invitations are made by users). */
async function creatorRole(executor: Db, row: InvitationsTable): Promise<Role | undefined> {
  const [type, id] = row.created_by.split(':');
  return type === 'user' && id ? userRepository.role(executor, row.workspace_id, id) : undefined;
}

const invalid = (why: string) => new AppError('invitation_invalid', `This invitation link ${why}: ask for a new one.`);

/**
 * One-time invitation links: an owner or admin creates one with a role (and optionally the one email that
 * may use it); its holder joins the workspace once, until it expires, is revoked, or its creator can no
 * longer grant that role. With mail on, an invitation that names an email is also emailed (`onCreated`).
 */
export function createInvitationService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, users: UserService, onCreated?: InvitationCreated) {
  async function usable(executor: Db, token: string): Promise<InvitationsTable> {
    const row = token.length >= 20 && token.length <= 100 ? await invitationRepository.findByTokenHash(executor, tokenHash(token)) : undefined;
    if (!row) throw AppError.notFound('invitation', 'link');
    if (row.accepted_at !== null) throw invalid('was already used');
    if (row.revoked_at !== null) throw invalid('was revoked');
    if (row.expires_at <= clock.now().toISOString()) throw invalid('has expired');
    if (!mayGrant(await creatorRole(executor, row), row.role)) throw invalid(`was created by someone who can no longer grant the ${row.role} role`);
    return row;
  }

  function checkEmail(invitation: InvitationsTable, email: string): void {
    if (invitation.email !== null && invitation.email !== email) {
      throw new AppError('invitation_email_mismatch', 'This invitation is for another email address: use it signed in as, or signing up with, the address it was sent to.');
    }
  }

  /** Marks the invitation used and adds the user to its workspace (unless already a member) inside `trx`, audited with the user as actor. */
  async function join(trx: Transaction<Database>, invitation: InvitationsTable, user: UserRow, request: RequestContext) {
    if (!(await invitationRepository.accept(trx, invitation.id, user.id, clock.now().toISOString()))) throw invalid('was already used');
    const ctx = userContext(user, invitation.workspace_id, request);
    await audit.record(trx, ctx, { action: 'invitation.accepted', target: { type: 'invitation', id: invitation.id }, changes: { accepted_by: { before: null, after: user.id } } });
    if (await userRepository.role(trx, invitation.workspace_id, user.id)) return;
    await userRepository.insertMembership(trx, { user_id: user.id, workspace_id: invitation.workspace_id, role: invitation.role, created_at: clock.now().toISOString() });
    await audit.record(trx, ctx, {
      action: 'member.added',
      target: { type: 'user', id: user.id },
      changes: { email: { before: null, after: user.email }, role: { before: null, after: invitation.role }, invitation_id: { before: null, after: invitation.id } },
    });
  }

  return {
    /** Creates a link for a role, valid for `ttlDays` (the token is returned this once). Only owners invite owners. */
    async create(ctx: OperationContext, actorRole: Role, input: { role: Role; email?: string | null; ttlDays: number }): Promise<{ invitation: InvitationView; token: string }> {
      if (!mayGrant(actorRole, input.role)) throw new AppError('insufficient_role', 'Only an owner can invite an owner.');
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
        expires_at: new Date(now.getTime() + input.ttlDays * DAY_MS).toISOString(),
        accepted_at: null,
        accepted_by: null,
        revoked_at: null,
        revoked_by: null,
      };
      await inTransaction(db, ctx, async (trx) => {
        await invitationRepository.insert(trx, row);
        await audit.record(trx, ctx, {
          action: 'invitation.created',
          target: { type: 'invitation', id: row.id },
          changes: { role: { before: null, after: row.role }, email: { before: null, after: email }, expires_at: { before: null, after: row.expires_at } },
        });
        // An invitation for one email is emailed too (when mail is on), committed with it.
        await onCreated?.(trx, row, token);
      });
      return { invitation: present(row), token };
    },

    /** Revokes an unused invitation of the actor's workspace; the same role rules as creating it. */
    async revoke(ctx: OperationContext, actorRole: Role, id: string): Promise<void> {
      await inTransaction(db, ctx, async (trx) => {
        const row = isId('invitation', id) ? await invitationRepository.find(trx, ctx.actor.workspaceId, id) : undefined;
        if (!row) throw AppError.notFound('invitation', id);
        if (!mayGrant(actorRole, row.role)) throw new AppError('insufficient_role', 'Only an owner can revoke an invitation for an owner.');
        const at = clock.now().toISOString();
        if (!(await invitationRepository.revoke(trx, ctx.actor.workspaceId, id, `${ctx.actor.type}:${ctx.actor.id}`, at))) {
          throw new AppError('invitation_invalid', `This invitation was already ${row.accepted_at !== null ? 'used' : 'revoked'}.`);
        }
        await audit.record(trx, ctx, { action: 'invitation.revoked', target: { type: 'invitation', id }, changes: { revoked_at: { before: null, after: at } } });
      });
    },

    /** Open invitations of the actor's workspace that still work (their creator can still grant them). */
    async listOpen(ctx: OperationContext): Promise<InvitationView[]> {
      const [rows, members] = await Promise.all([
        invitationRepository.listOpen(db, ctx.actor.workspaceId, clock.now().toISOString()),
        userRepository.members(db, ctx.actor.workspaceId),
      ]);
      const roles = new Map(members.map((m) => [`user:${m.user_id}`, m.role]));
      return rows.filter((row) => mayGrant(roles.get(row.created_by), row.role)).map(present);
    },

    /** What a link offers (workspace, role and the email it is for), for the accept page. */
    async preview(token: string): Promise<InvitationPreview> {
      const row = await usable(db, token);
      const workspace = await workspaceRepository.find(db, row.workspace_id);
      return { workspace_name: workspace?.name ?? '', role: row.role, email: row.email };
    },

    /** A signed-in user accepts a link; returns the workspace joined. */
    async accept(token: string, user: { id: string; email: string }, request: RequestContext): Promise<string> {
      return inTransaction(db, {}, async (trx) => {
        const invitation = await usable(trx, token);
        checkEmail(invitation, user.email);
        await join(trx, invitation, { ...user, created_at: '' }, request);
        return invitation.workspace_id;
      });
    },

    /** Signs up a new user through a link: the account and the membership are created together. */
    async signUp(token: string, input: { email: string; password: string }, request: RequestContext): Promise<{ user: UserRow; workspaceId: string }> {
      const email = normalizeEmail(input.email);
      return inTransaction(db, {}, async (trx) => {
        const invitation = await usable(trx, token);
        checkEmail(invitation, email);
        const user = await users.insertUser(trx, email, input.password);
        await join(trx, invitation, user, request);
        return { user, workspaceId: invitation.workspace_id };
      });
    },
  };
}

export type InvitationService = ReturnType<typeof createInvitationService>;

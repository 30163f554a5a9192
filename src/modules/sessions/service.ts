import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext, RequestContext } from '../../lib/actor.js';
import { newToken, tokenHash } from '../../lib/tokens.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import type { AuditWriter } from '../audit/writer.js';
import { userRepository, type Role } from '../users/repository.js';
import { userContext } from '../users/service.js';
import { sessionRepository } from './repository.js';

/** How long a session lives without use; every use (at most once a minute) extends it. */
export const SESSION_TTL_MS = 14 * 86_400_000;
const TOUCH_INTERVAL_MS = 60_000;

/** A live session with the user and the role held in its current workspace. */
export interface SessionPrincipal {
  sessionId: string;
  userId: string;
  email: string;
  workspaceId: string;
  role: Role;
  csrfToken: string;
}

/**
 * Server-side dashboard sessions: stored by the hash of the cookie token, so they work across instances.
 * Sessions are security events: sign-in, sign-out and workspace switches are audited in the workspace concerned.
 */
export function createSessionService(db: Kysely<Database>, clock: Clock, audit: AuditWriter) {
  return {
    /**
     * Opens a session for a user in a workspace; returns the cookie token (never stored) and the CSRF token.
     * `signIn` records `user.signed_in`; sign-up passes null (its own events, with the same request, cover it).
     */
    async create(userId: string, workspaceId: string, signIn: OperationContext | null): Promise<{ token: string; csrfToken: string; expiresAt: string }> {
      const token = newToken();
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
      const csrfToken = newToken();
      await inTransaction(db, {}, async (trx) => {
        await sessionRepository.insert(trx, {
          id: tokenHash(token),
          user_id: userId,
          workspace_id: workspaceId,
          csrf_token: csrfToken,
          created_at: now.toISOString(),
          expires_at: expiresAt,
          last_seen_at: now.toISOString(),
        });
        if (signIn) await audit.record(trx, signIn, { action: 'user.signed_in', target: { type: 'user', id: userId }, changes: {} });
      });
      return { token, csrfToken, expiresAt };
    },

    /** The session behind a cookie token, or null (unknown, expired, or no longer a member of its workspace). */
    async resolve(token: string): Promise<SessionPrincipal | null> {
      if (token.length < 20 || token.length > 100) return null;
      const now = clock.now();
      const session = await sessionRepository.findLive(db, tokenHash(token), now.toISOString());
      if (!session) return null;
      const [role, user] = await Promise.all([userRepository.role(db, session.workspace_id, session.user_id), userRepository.find(db, session.user_id)]);
      if (!role || !user) return null;
      if (now.getTime() - Date.parse(session.last_seen_at) > TOUCH_INTERVAL_MS) {
        await sessionRepository.touch(db, session.id, now.toISOString(), new Date(now.getTime() + SESSION_TTL_MS).toISOString());
      }
      return { sessionId: session.id, userId: user.id, email: user.email, workspaceId: session.workspace_id, role, csrfToken: session.csrf_token };
    },

    /**
     * Moves the session to another workspace of its user (404 when not a member there), audited there as
     * `session.workspace_switched`; `request` null when the move is part of another audited write (accepting an invitation).
     */
    async switchWorkspace(principal: SessionPrincipal, workspaceId: string, request: RequestContext | null): Promise<void> {
      await inTransaction(db, {}, async (trx) => {
        const role = isId('workspace', workspaceId) ? await userRepository.role(trx, workspaceId, principal.userId) : undefined;
        if (!role) throw AppError.notFound('workspace', workspaceId);
        await sessionRepository.setWorkspace(trx, principal.sessionId, workspaceId);
        if (request) {
          await audit.record(trx, userContext({ id: principal.userId, email: principal.email }, workspaceId, request), {
            action: 'session.workspace_switched',
            target: { type: 'user', id: principal.userId },
            changes: { workspace_id: { before: principal.workspaceId, after: workspaceId } },
          });
        }
      });
    },

    /** Ends a session (sign-out), audited as `user.signed_out` in the session's workspace. */
    async end(principal: SessionPrincipal, request: RequestContext): Promise<void> {
      await inTransaction(db, {}, async (trx) => {
        await sessionRepository.delete(trx, principal.sessionId);
        const ctx = userContext({ id: principal.userId, email: principal.email }, principal.workspaceId, request);
        await audit.record(trx, ctx, { action: 'user.signed_out', target: { type: 'user', id: principal.userId }, changes: {} });
      });
    },

    /** Deletes expired sessions (housekeeping). */
    async sweep(): Promise<void> {
      await sessionRepository.deleteExpired(db, clock.now().toISOString());
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;

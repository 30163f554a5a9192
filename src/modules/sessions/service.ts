import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { newToken, tokenHash } from '../../lib/tokens.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { userRepository, type Role } from '../users/repository.js';
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

/** Server-side dashboard sessions: stored by the hash of the cookie token, so they work across instances. */
export function createSessionService(db: Kysely<Database>, clock: Clock) {
  return {
    /** Opens a session for a user in a workspace; returns the cookie token (never stored) and the CSRF token. */
    async create(userId: string, workspaceId: string): Promise<{ token: string; csrfToken: string; expiresAt: string }> {
      const token = newToken();
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
      const csrfToken = newToken();
      await sessionRepository.insert(db, {
        id: tokenHash(token),
        user_id: userId,
        workspace_id: workspaceId,
        csrf_token: csrfToken,
        created_at: now.toISOString(),
        expires_at: expiresAt,
        last_seen_at: now.toISOString(),
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

    /** Moves the session to another workspace of its user (404 when not a member there). */
    async switchWorkspace(principal: SessionPrincipal, workspaceId: string): Promise<void> {
      const role = isId('workspace', workspaceId) ? await userRepository.role(db, workspaceId, principal.userId) : undefined;
      if (!role) throw AppError.notFound('workspace', workspaceId);
      await sessionRepository.setWorkspace(db, principal.sessionId, workspaceId);
    },

    /** Ends a session (sign-out). */
    async end(sessionId: string): Promise<void> {
      await sessionRepository.delete(db, sessionId);
    },

    /** Deletes expired sessions (housekeeping). */
    async sweep(): Promise<void> {
      await sessionRepository.deleteExpired(db, clock.now().toISOString());
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;

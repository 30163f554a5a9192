import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { RequestContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { newToken, tokenHash } from '../../lib/tokens.js';
import type { Mailer } from '../mail/mailer.js';
import { passwordResetMail } from '../mail/templates.js';
import { hashPassword } from './passwords.js';
import { passwordResetRepository } from './password-reset-repository.js';
import { userRepository } from './repository.js';
import { checkPassword, type UserService } from './service.js';

/** How long an emailed reset link works. */
export const RESET_LINK_MINUTES = 60;

/** What password resets need: the mailer, the public address links point to, and a log for failed sends. */
export interface PasswordResetDeps {
  db: Kysely<Database>;
  clock: Clock;
  users: UserService;
  mailer: Mailer;
  publicUrl: string;
  log: { warn(details: object, message: string): void };
}

function invalidLink(): AppError {
  return new AppError('invalid_request', 'This password reset link is invalid, expired or already used: ask for a new one.');
}

/** Password reset by email: one-time links valid for an hour, stored hashed; no account enumeration. */
export function createPasswordResetService({ db, clock, users, mailer, publicUrl, log }: PasswordResetDeps) {
  // Sends still running: awaited on shutdown (and by tests, which must know that nothing was sent).
  const inFlight = new Set<Promise<void>>();

  async function emailLink(email: string): Promise<void> {
    const user = await userRepository.findByEmail(db, email);
    if (!user) return;
    const token = newToken();
    const now = clock.now();
    // Links that expired a day ago go as new ones are made: the table stays as small as its traffic.
    await passwordResetRepository.deleteExpired(db, new Date(now.getTime() - 24 * 60 * 60_000).toISOString());
    await passwordResetRepository.insert(db, {
      token_hash: tokenHash(token),
      user_id: user.id,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + RESET_LINK_MINUTES * 60_000).toISOString(),
    });
    await mailer.send(passwordResetMail(user.email, `${publicUrl}/reset-password?token=${encodeURIComponent(token)}`, RESET_LINK_MINUTES));
  }

  return {
    /**
     * Emails a reset link when the address belongs to an account, in the background: the caller answers the
     * same, at once, whether or not it does (neither the answer nor its timing says if an account exists).
     * Nothing at all when mail is off.
     */
    request(rawEmail: string): void {
      if (!mailer.enabled) return;
      const task: Promise<void> = emailLink(rawEmail.trim().toLowerCase())
        .catch((error: unknown) => log.warn({ err: error }, 'password reset email failed'))
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    },

    /** Resolves once every reset email started so far was sent (or failed). */
    async settled(): Promise<void> {
      await Promise.all([...inFlight]);
    },

    /**
     * Sets a new password through a link: the link is used up with the change (and the user's other links
     * with it), every session of the user ends, and the change is audited in each of their workspaces.
     */
    async reset(token: string, password: string, request: RequestContext): Promise<void> {
      checkPassword(password);
      const hash = tokenHash(token);
      const found = await passwordResetRepository.findUsable(db, hash, clock.now().toISOString());
      if (!found) throw invalidLink();
      // argon2 before the transaction: a write transaction never waits on hashing.
      const passwordHash = await hashPassword(password);
      await inTransaction(db, {}, async (trx) => {
        const now = clock.now().toISOString();
        if (!(await passwordResetRepository.use(trx, hash, found.user_id, now))) throw invalidLink();
        await passwordResetRepository.useAllOf(trx, found.user_id, now);
        await users.writePassword(trx, found.user_id, passwordHash, { type: 'reset', request });
      });
    },
  };
}

export type PasswordResetService = ReturnType<typeof createPasswordResetService>;

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { AppError } from '../http/errors.js';
import { askStore } from '../http/rate-limit.js';
import { tokenHash } from '../lib/tokens.js';
import type { RateLimitStore } from '../lib/rate-limit/types.js';

const WINDOW_MS = 15 * 60_000;

/**
 * Spends one sign-in attempt from the IP+email budget and the IP budget together (GCRA, the API's store:
 * Redis on the several-instance shape), or refuses with 429 and Retry-After. The email is hashed so the
 * store never holds addresses.
 */
export function signInLimiter(store: RateLimitStore, limits: Config['signInLimit']) {
  return async function spendAttempt(request: FastifyRequest, reply: FastifyReply, email: string): Promise<void> {
    const ip = request.ip ?? 'unknown';
    const decision = await askStore(store, [
      { policy: 'sign_in', id: `signin:${ip}:${tokenHash(email.trim().toLowerCase())}`, limit: limits.perIpAndEmail, windowMs: WINDOW_MS },
      { policy: 'sign_in_ip', id: `signin:${ip}`, limit: limits.perIp, windowMs: WINDOW_MS },
    ], true);
    if (!decision.allowed) {
      const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      reply.header('Retry-After', String(retryAfter));
      throw new AppError('rate_limited', `Too many sign-in attempts; try again in ${retryAfter} s.`, { violated_policies: decision.violated }, { 'Retry-After': String(retryAfter) });
    }
  };
}

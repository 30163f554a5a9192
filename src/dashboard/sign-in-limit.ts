import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { budgetKeyOf } from '../http/client-ip.js';
import { AppError } from '../http/errors.js';
import { askStore } from '../http/rate-limit.js';
import { tokenHash } from '../lib/tokens.js';
import type { Budget, RateLimitStore } from '../lib/rate-limit/types.js';

const WINDOW_MS = 15 * 60_000;

// Spends one request from the budgets, or refuses with 429 and Retry-After.
async function spend(store: RateLimitStore, budgets: Budget[], reply: FastifyReply, refusal: string): Promise<void> {
  const decision = await askStore(store, budgets, true);
  if (!decision.allowed) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    reply.header('Retry-After', String(retryAfter));
    throw new AppError('rate_limited', `${refusal}; try again in ${retryAfter} s.`, { 'violated-policies': decision.violated }, { 'Retry-After': String(retryAfter) });
  }
}

/**
 * onRequest of /app/api: each request to a public route (sign-in, sign-up, invitation lookup) spends one from
 * the client IP's budget before its body is read, so a malformed or oversized body costs its sender too and
 * an exhausted budget is refused without parsing anything (GCRA, the API's store: Redis on the
 * several-instance shape).
 */
export function publicRouteBudget(store: RateLimitStore, limits: Config['signInLimit']) {
  return async function spendIpBudget(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!request.routeOptions.config.publicRoute) return;
    const budget = { policy: 'sign_in_ip', id: `signin:${budgetKeyOf(request.ip)}`, limit: limits.perIp, windowMs: WINDOW_MS };
    await spend(store, [budget], reply, 'Too many sign-in, sign-up or invitation requests from this address');
  };
}

/**
 * Spends one sign-in attempt from the IP+email budget (the IP's own budget was spent by `publicRouteBudget`),
 * or refuses with 429 and Retry-After. The email is hashed so the store never holds addresses.
 */
export function signInLimiter(store: RateLimitStore, limits: Config['signInLimit']) {
  return async function spendAttempt(request: FastifyRequest, reply: FastifyReply, email: string): Promise<void> {
    const id = `signin:${budgetKeyOf(request.ip)}:${tokenHash(email.trim().toLowerCase())}`;
    await spend(store, [{ policy: 'sign_in', id, limit: limits.perIpAndEmail, windowMs: WINDOW_MS }], reply, 'Too many sign-in attempts');
  };
}

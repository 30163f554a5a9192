import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { RateLimitStoreUnavailable } from '../lib/rate-limit/redis-store.js';
import type { Budget, BudgetState, RateDecision, RateLimitStore } from '../lib/rate-limit/types.js';
import { AppError } from './errors.js';

/** Requests per minute per API key and per workspace. */
export interface RateLimits {
  keyPerMinute: number;
  workspacePerMinute: number;
}

function policyHeader(states: BudgetState[]): string {
  return states.map((s) => `"${s.policy}";q=${s.limit};w=${s.windowSeconds}`).join(', ');
}

function remainingHeader(states: BudgetState[]): string {
  return states.map((s) => `"${s.policy}";r=${s.remaining};t=${s.resetSeconds}`).join(', ');
}

/**
 * The rate-limit layer (onRequest, right after authentication): spends one request from the key's and the
 * workspace's budgets together, sets RateLimit-Policy and RateLimit on the response, and refuses with 429
 * and an honest Retry-After (the longest wait among the violated budgets) when either is exhausted.
 */
export function rateLimitHook(store: RateLimitStore, limits: RateLimits, clock: Clock) {
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = request.principal;
    if (!principal) return;
    await spendBudgets(
      store,
      [
        { policy: 'key', id: principal.keyId, limit: limits.keyPerMinute, windowMs: 60_000 },
        { policy: 'workspace', id: principal.workspaceId, limit: limits.workspacePerMinute, windowMs: 60_000 },
      ],
      clock,
      reply,
    );
  };
}

/**
 * Spends one request from every budget together (or from none), sets RateLimit-Policy and RateLimit, and
 * throws 429 with Retry-After when a budget is exhausted. Shared by /api/v1 and the widget endpoints.
 */
export async function spendBudgets(store: RateLimitStore, budgets: Budget[], clock: Clock, reply: FastifyReply): Promise<void> {
  let decision: RateDecision;
  try {
    decision = await store.consume(budgets, clock.now().getTime());
  } catch (error) {
    if (!(error instanceof RateLimitStoreUnavailable)) throw error;
    throw new AppError('service_unavailable', 'Rate limiting is unavailable right now (fail-closed policy); retry shortly.', {}, { 'Retry-After': '2' });
  }
  reply.header('RateLimit-Policy', policyHeader(decision.budgets));
  reply.header('RateLimit', remainingHeader(decision.budgets));
  if (!decision.allowed) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new AppError(
      'rate_limited',
      `Rate limit exceeded (${decision.violated.join(' and ')} budget); retry after ${retryAfter} s.`,
      { violated_policies: decision.violated },
      { 'Retry-After': String(retryAfter) },
    );
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitStoreUnavailable } from '../lib/rate-limit/redis-store.js';
import type { Budget, BudgetState, RateDecision, RateLimitStore } from '../lib/rate-limit/types.js';
import { AppError } from './errors.js';

/** Requests per minute per API key and per workspace. */
export interface RateLimits {
  keyPerMinute: number;
  workspacePerMinute: number;
}

function policyHeader(budgets: readonly Budget[]): string {
  return budgets.map((b) => `"${b.policy}";q=${b.limit};w=${Math.round(b.windowMs / 1000)}`).join(', ');
}

/** Budgets with their `RateLimit-Policy` value. */
interface PolicedBudgets {
  budgets: Budget[];
  policy: string;
}

function remainingHeader(states: BudgetState[]): string {
  let header = '';
  for (const s of states) header += `${header === '' ? '' : ', '}"${s.policy}";r=${s.remaining};t=${s.resetSeconds}`;
  return header;
}

/** The rate-limit layer of /api/v1, spending from the key's and the workspace's budgets together. */
export interface ApiRateLimit {
  /** Spends one request (onRequest, right after authentication); 429 when a budget is exhausted. */
  spend(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/**
 * The rate-limit layer (onRequest, right after authentication): spends one request from the key's and the
 * workspace's budgets together, sets RateLimit-Policy and RateLimit on the response, and refuses with 429
 * and an honest Retry-After (the longest wait among the violated budgets) when either is exhausted.
 */
export function rateLimitHook(store: RateLimitStore, limits: RateLimits): ApiRateLimit {
  // A cached key's principal is the same object on every request: its budgets and their RateLimit-Policy
  // value are built once.
  const budgetsByPrincipal = new WeakMap<object, PolicedBudgets>();
  const budgetsOf = (principal: { keyId: string; workspaceId: string }): PolicedBudgets => {
    let policed = budgetsByPrincipal.get(principal);
    if (policed === undefined) {
      const budgets: Budget[] = [
        { policy: 'key', id: principal.keyId, limit: limits.keyPerMinute, windowMs: 60_000 },
        { policy: 'workspace', id: principal.workspaceId, limit: limits.workspacePerMinute, windowMs: 60_000 },
      ];
      policed = { budgets, policy: policyHeader(budgets) };
      budgetsByPrincipal.set(principal, policed);
    }
    return policed;
  };
  return {
    async spend(request, reply) {
      if (!request.principal) return;
      const { budgets, policy } = budgetsOf(request.principal);
      applyDecision(policy, await askStore(store, budgets, true), reply);
    },
  };
}

/**
 * Spends one request from every budget together (or from none), sets RateLimit-Policy and RateLimit, and
 * throws 429 with Retry-After when a budget is exhausted. Shared by /api/v1 and the widget endpoints.
 */
export async function spendBudgets(store: RateLimitStore, budgets: Budget[], reply: FastifyReply): Promise<void> {
  applyDecision(policyHeader(budgets), await askStore(store, budgets, true), reply);
}

/**
 * The store's decision on `budgets`, spending from them (`consume`) or not (`peek`); an unreachable store
 * under the fail-closed policy becomes a 503.
 */
export async function askStore(store: RateLimitStore, budgets: Budget[], spend: boolean): Promise<RateDecision> {
  try {
    return await (spend ? store.consume(budgets) : store.peek(budgets));
  } catch (error) {
    if (!(error instanceof RateLimitStoreUnavailable)) throw error;
    throw new AppError('service_unavailable', 'Rate limiting is unavailable right now (fail-closed policy); retry shortly.', {}, { 'Retry-After': '2' });
  }
}

/** Sets RateLimit-Policy and RateLimit from a decision, and throws 429 with Retry-After when it refuses. */
function applyDecision(policy: string, decision: RateDecision, reply: FastifyReply): void {
  reply.header('RateLimit-Policy', policy);
  reply.header('RateLimit', remainingHeader(decision.budgets));
  if (!decision.allowed) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new AppError(
      'rate_limited',
      `Rate limit exceeded (${decision.violated.join(' and ')} budget); retry after ${retryAfter} s.`,
      { 'violated-policies': decision.violated },
      { 'Retry-After': String(retryAfter) },
    );
  }
}

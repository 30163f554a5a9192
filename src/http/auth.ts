import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { OperationContext } from '../lib/actor.js';
import type { Budget, RateLimitStore } from '../lib/rate-limit/types.js';
import type { ApiKeyPrincipal, ApiKeyService, AuthFailure } from '../modules/api-keys/service.js';
import { askStore, type ApiRateLimit } from './rate-limit.js';
import { budgetKeyOf } from './client-ip.js';
import { AppError } from './errors.js';
import { hookList } from './route-hooks.js';
import type { Scope } from './scopes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope an API key needs for this route. Routes without one are public. */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** Set by the access check on routes that declare a scope. */
    principal?: ApiKeyPrincipal;
  }
}

const REALM = 'Bearer realm="api"';
const FAILURE_DETAIL: Record<AuthFailure, string> = {
  malformed: 'The API key is malformed: expected a key of the form wsk_... as created in Settings > Developers or by the CLI.',
  unknown: 'The API key is not recognised.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
};

// Header values must be visible ASCII: quotes and backslashes dropped, anything else non-ASCII replaced.
function asciiQuoted(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
}

function missingKey(): AppError {
  return new AppError('missing_api_key', 'Send an API key as "Authorization: Bearer <API_KEY>".', {}, { 'WWW-Authenticate': REALM });
}

function refusedKey(reason: AuthFailure): AppError {
  const detail = FAILURE_DETAIL[reason];
  return new AppError('invalid_api_key', detail, {}, { 'WWW-Authenticate': `${REALM}, error="invalid_token", error_description="${asciiQuoted(detail)}"` });
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/** What the access check of /api/v1 needs. */
export interface AccessPolicyOptions {
  apiKeys: ApiKeyService;
  rateLimit: ApiRateLimit;
  /** Where the per-IP budget of failed authentications lives (the rate-limit store). */
  store: RateLimitStore;
  /** Failed authentications per client IP per minute before that IP gets 429 without a lookup. */
  failedAuthPerIpPerMinute: number;
}

/**
 * The access policy of /api/v1, three steps in one fixed order, each with one code path:
 *
 * 1. authentication: the bearer key becomes the request's principal, or 401. Every request that does not
 *    authenticate (no key, a malformed, unknown, revoked or expired one) spends from its client IP's budget
 *    of failed authentications; once that is spent, the IP gets 429 with Retry-After before any lookup, so
 *    an invalid-key storm costs the database nothing and leaves valid traffic its capacity;
 * 2. the rate limit of the key and its workspace (src/http/rate-limit.ts), or 429;
 * 3. the scope the route declares, or 403.
 *
 * It runs as the first onRequest hook of every route that declares a scope (`attach`, a Fastify onRoute
 * hook), before the body is read, so refused requests cost no parsing and never reach validation.
 */
export function accessPolicy(options: AccessPolicyOptions) {
  const { apiKeys, rateLimit, store } = options;
  const failedAuthBudget = (ip: string): Budget[] => [{ policy: 'failed-auth', id: ip, limit: options.failedAuthPerIpPerMinute, windowMs: 60_000 }];

  async function authenticate(request: FastifyRequest): Promise<void> {
    const budget = failedAuthBudget(budgetKeyOf(request.ip));
    const standing = await askStore(store, budget, false);
    if (!standing.allowed) {
      const retryAfter = Math.max(1, Math.ceil(standing.retryAfterMs / 1000));
      throw new AppError(
        'rate_limited',
        `Too many requests with a missing or invalid API key from this address; retry after ${retryAfter} s.`,
        { 'violated-policies': ['failed-auth'] },
        { 'Retry-After': String(retryAfter) },
      );
    }
    const token = bearerToken(request);
    const result = token === null ? null : await apiKeys.authenticate(token);
    if (result?.ok) {
      request.principal = result.principal;
      return;
    }
    await askStore(store, budget, true);
    throw result ? refusedKey(result.reason) : missingKey();
  }

  function accessFor(scope: Scope) {
    return async function access(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      await authenticate(request);
      await rateLimit.spend(request, reply);
      requireScope(request, scope);
    };
  }

  return {
    /** Fastify onRoute hook: a route that declares a scope gets the access check as its first onRequest hook. */
    attach(route: RouteOptions): void {
      const scope = (route.config as { scope?: Scope } | undefined)?.scope;
      if (scope) route.onRequest = [accessFor(scope), ...hookList(route.onRequest)];
    },
  };
}

/** Authorization (after rate limiting): the key must hold the scope the route declares, or 403. */
export function requireScope(request: FastifyRequest, scope: Scope): void {
  if (!request.principal || request.principal.scopes.has(scope)) return;
  throw new AppError(
    'insufficient_scope',
    `This operation requires the scope "${scope}", which the API key does not have.`,
    { required_scope: scope },
    { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
  );
}

/** The operation context of an authenticated API request: the key as actor, plus request facts. */
export function apiContext(request: FastifyRequest): OperationContext {
  const principal = request.principal;
  if (!principal) throw new Error('apiContext() called on a route without a scope');
  const userAgent = request.headers['user-agent'];
  return {
    actor: { type: 'api_key', id: principal.keyId, name: principal.keyName, workspaceId: principal.workspaceId },
    request: {
      requestId: request.id,
      ip: request.ip ?? null,
      userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
      idempotencyKey: request.idempotency?.key ?? null,
    },
    ...(request.idempotency ? { trx: request.idempotency.trx } : {}),
  };
}

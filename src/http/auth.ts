import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { OperationContext } from '../lib/actor.js';
import type { ApiKeyPrincipal, ApiKeyService, AuthFailure, AuthResult } from '../modules/api-keys/service.js';
import type { ApiRateLimit } from './rate-limit.js';
import { sendRefusal } from './error-handler.js';
import { AppError } from './errors.js';
import { RefusalQueue } from './refusal-queue.js';
import { hookList } from './route-hooks.js';
import type { Scope } from './scopes.js';
import { isWellFormedApiKey } from '../lib/api-key-format.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope an API key needs for this route. Routes without one are public. */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** Set by the auth hook on routes that declare a scope. */
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

/** How many refusals of malformed or missing keys are answered per timer tick (~1 ms) while valid keys are in use (RefusalQueue): at most about 1,000 per second. */
const REFUSALS_PER_TICK = 1;

// The refusals of authentication are the same every time (an AppError is immutable): built once, so an
// invalid-key storm costs no error object and no header formatting per request.
const MISSING_KEY = new AppError('missing_api_key', 'Send an API key as "Authorization: Bearer <API_KEY>".', {}, { 'WWW-Authenticate': REALM });
const REFUSED_KEY = Object.fromEntries(
  Object.entries(FAILURE_DETAIL).map(([reason, detail]) => [
    reason,
    new AppError('invalid_api_key', detail, {}, { 'WWW-Authenticate': `${REALM}, error="invalid_token", error_description="${asciiQuoted(detail)}"` }),
  ]),
) as Record<AuthFailure, AppError>;

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * The request's bearer key when it has the shape and checksum of a key this service issues, else the
 * refusal it earns before any lookup. Decided synchronously, so an invalid-key storm costs no promise.
 */
function presentedKey(request: FastifyRequest): string | AppError {
  const token = bearerToken(request);
  if (token === null) return MISSING_KEY;
  return isWellFormedApiKey(token) ? token : REFUSED_KEY.malformed;
}

/**
 * Authentication of a well-formed key (onRequest of /api/v1, after `presentedKey`): the key becomes the
 * request's principal, or 401. It runs before the body is read, so refused requests cost no parsing and
 * never reach validation. `now` answers without waiting when it can (a cached key, nothing to record),
 * and returns false when only the asynchronous path can.
 */
export function authenticateHook(apiKeys: ApiKeyService) {
  function admit(request: FastifyRequest, result: AuthResult): void {
    if (!result.ok) throw REFUSED_KEY[result.reason];
    request.principal = result.principal;
  }
  return {
    async wait(request: FastifyRequest, token: string): Promise<void> {
      admit(request, await apiKeys.authenticate(token));
    },
    now(request: FastifyRequest, token: string): boolean {
      const result = apiKeys.authenticateNow(token);
      if (result === undefined) return false;
      admit(request, result);
      return true;
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

/**
 * The access policy of /api/v1 as one onRequest hook (one hook per request instead of three): authentication,
 * then the rate limit (so refused keys spend no budget), then the route's scope. A key refused on its shape
 * is answered at once. On the embedded shape a cached key and the in-memory budgets are decided
 * synchronously too; the rest (a key lookup, a shared budget store) takes the asynchronous path.
 *
 * `attach` is a Fastify onRoute hook: each route that declares a scope gets the check as its first onRequest
 * hook, with the scope in the hook's closure (Fastify's `request.routeOptions` builds a new object on every
 * read); public routes get no hook at all.
 */
export function accessPolicy(authenticate: ReturnType<typeof authenticateHook>, rateLimit: ApiRateLimit) {
  const refusals = new RefusalQueue(REFUSALS_PER_TICK);
  async function checkKeyAndBudget(request: FastifyRequest, reply: FastifyReply, token: string, scope: Scope): Promise<void> {
    await authenticate.wait(request, token);
    await rateLimit.spend(request, reply);
    requireScope(request, scope);
  }
  const refuse = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, error: unknown) =>
    // A refusal is answered here, by the one problem renderer, without the error machinery's extra turns
    // (a hook that has answered does not call done()).
    error instanceof AppError ? void sendRefusal(request, reply, error) : done(error as Error);

  function accessFor(scope: Scope) {
    return function access(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
      const key = presentedKey(request);
      // A key refused on its shape is answered at a lower priority (`RefusalQueue`): under an invalid-key
      // storm, the valid requests beside it do not wait for the storm's answers.
      if (key instanceof AppError) return void refusals.add(request, reply, key);
      try {
        if (authenticate.now(request, key) && rateLimit.spendNow(request, reply)) {
          requireScope(request, scope);
          refusals.noteValid();
          return done();
        }
      } catch (error) {
        return refuse(request, reply, done, error);
      }
      // Not decided yet: the key lookup (or the budget, when the key was decided above) waits.
      const pending = request.principal
        ? rateLimit.spend(request, reply).then(() => requireScope(request, scope))
        : checkKeyAndBudget(request, reply, key, scope);
      pending.then(
        () => {
          refusals.noteValid();
          done();
        },
        (error: unknown) => refuse(request, reply, done, error),
      );
    };
  }

  return {
    attach(route: RouteOptions): void {
      const scope = (route.config as { scope?: Scope } | undefined)?.scope;
      if (scope) route.onRequest = [accessFor(scope), ...hookList(route.onRequest)];
    },
  };
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

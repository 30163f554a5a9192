import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { AppError } from '../http/errors.js';
import type { OperationContext, RequestContext } from '../lib/actor.js';
import { sameToken } from '../lib/tokens.js';
import type { SessionPrincipal, SessionService } from '../modules/sessions/service.js';
import { SESSION_TTL_MS } from '../modules/sessions/service.js';
import type { Role } from '../modules/users/repository.js';
import { roleAtLeast, userContext } from '../modules/users/service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Dashboard routes: reachable without a session (sign-in, sign-up, invitation preview). */
    publicRoute?: boolean;
    /** Dashboard routes: the least role the signed-in user needs in the current workspace. */
    minRole?: Role;
  }
  interface FastifyRequest {
    /** The dashboard session, set by the session hook of /app/api. */
    session?: SessionPrincipal;
  }
}

/** The session cookie's name. */
export const SESSION_COOKIE = 'sid';
/** The header every state-changing dashboard request must carry. */
export const CSRF_HEADER = 'x-csrf-token';

/** The value of one cookie of the request, if present; a value that is not valid percent-encoding counts as absent. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return decodeCookieValue(part.slice(index + 1).trim());
  }
  return undefined;
}

function decodeCookieValue(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined; // e.g. `sid=%E0%A4%A`: no session, not a 500
  }
}

/** Sets (or, with null, clears) the session cookie: HttpOnly, SameSite=Lax, Path=/, Secure behind https. */
export function setSessionCookie(reply: FastifyReply, config: Config, token: string | null): void {
  const secure = config.publicUrl.startsWith('https://') ? '; Secure' : '';
  const value = token === null ? `${SESSION_COOKIE}=; Max-Age=0` : `${SESSION_COOKIE}=${token}; Max-Age=${SESSION_TTL_MS / 1000}`;
  reply.header('Set-Cookie', `${value}; Path=/; HttpOnly; SameSite=Lax${secure}`);
}

/** Facts of the request recorded with dashboard writes. */
export function requestFacts(request: FastifyRequest): RequestContext {
  const userAgent = request.headers['user-agent'];
  return { requestId: request.id, ip: request.ip ?? null, userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null };
}

/** The operation context of a dashboard request: the signed-in user, in the session's current workspace. */
export function dashboardContext(request: FastifyRequest): OperationContext {
  const session = request.session;
  if (!session) throw new Error('dashboardContext() called on a public route');
  return userContext({ id: session.userId, email: session.email }, session.workspaceId, requestFacts(request));
}

// A browser always sends Origin on cross-origin requests and on same-origin POST/PATCH/DELETE; when it is
// present it must be this service (the public URL, or the Host the request was sent to).
function originAllowed(request: FastifyRequest, config: Config): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return request.headers['sec-fetch-site'] !== 'cross-site';
  const own = new Set([new URL(config.publicUrl).origin, `${request.protocol}://${request.headers.host ?? ''}`]);
  return own.has(origin);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The access policy of /app/api in one onRequest hook: CSRF (Origin, and the session's token in
 * X-CSRF-Token on every state-changing request), then the session cookie (401 without one), then the
 * route's least role (403).
 */
export function sessionHook(sessions: SessionService, config: Config) {
  return async function access(request: FastifyRequest): Promise<void> {
    const unsafe = !SAFE_METHODS.has(request.method);
    if (unsafe && !originAllowed(request, config)) {
      throw new AppError('csrf_failed', 'Cross-site request refused: the Origin is not this service.');
    }
    const routeConfig = request.routeOptions.config;
    const token = readCookie(request, SESSION_COOKIE);
    const session = token ? await sessions.resolve(token) : null;
    if (session) request.session = session;
    if (routeConfig.publicRoute) return;
    if (!session) throw new AppError('not_signed_in', 'Sign in to use the dashboard.');
    if (unsafe) {
      const sent = request.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !sameToken(sent, session.csrfToken)) {
        throw new AppError('csrf_failed', 'The X-CSRF-Token header is missing or does not match this session; reload the page.');
      }
    }
    if (routeConfig.minRole && !roleAtLeast(session.role, routeConfig.minRole)) {
      throw new AppError('insufficient_role', `This needs the ${routeConfig.minRole} role or higher in this workspace; you are a ${session.role}.`);
    }
  };
}

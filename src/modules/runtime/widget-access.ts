import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { budgetKeyOf } from '../../http/client-ip.js';
import { AppError } from '../../http/errors.js';
import { spendBudgets } from '../../http/rate-limit.js';
import type { RequestContext } from '../../lib/actor.js';
import { isId } from '../../lib/ids.js';
import { parseJson } from '../../lib/json.js';
import type { RateLimitStore } from '../../lib/rate-limit/types.js';
import { normalizeOrigin } from '../chatbots/origins.js';
import { chatbotRepository } from '../chatbots/repository.js';
import { runtimeRepository } from './repository.js';
import type { VisitorSession, WidgetService } from './widget-service.js';

/** How a widget route is reached: which path parameter names its agent, and what it requires. */
export interface WidgetRouteConfig {
  /** `chatbot`: {chatbot_id} in the path; `conversation`: {conversation_id}, opened by a visitor token. */
  resource: 'chatbot' | 'conversation';
  /** Spends from the conversation's message budget too (sending a message). */
  messageBudget?: boolean;
  /** A CORS preflight (OPTIONS) route. */
  preflight?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    widget?: WidgetRouteConfig;
  }
  interface FastifyRequest {
    /** Set on widget conversation routes by the access hook. */
    visitor?: VisitorSession;
  }
}

const REALM = 'Bearer realm="widget"';
// Last-Event-ID: the widget resumes its conversation's event stream with it after any end.
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Last-Event-ID';
const EXPOSE_HEADERS = 'Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location';

/** Widget limits: requests per minute per client IP, messages per minute per conversation. */
export interface WidgetLimits {
  ratePerIpPerMinute: number;
  messagesPerConversationPerMinute: number;
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  return /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? null;
}

/** The website each admitted cross-origin widget request came from (set by the access hook's CORS step). */
const websites = new WeakMap<FastifyRequest, string>();

/** The website (normalized origin) the widget runs on; null on the service's own hosted page, or without an Origin. */
export function websiteOf(request: FastifyRequest): string | null {
  return websites.get(request) ?? null;
}

/** The request facts recorded with a visitor's writes. */
export function widgetRequestContext(request: FastifyRequest): RequestContext {
  const userAgent = request.headers['user-agent'];
  return { requestId: request.id, ip: request.ip ?? null, userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null };
}

/**
 * The access policy of /widget/v1, one onRequest hook in a fixed order: CORS (the Origin must be one the
 * agent allows; no Origin, or the service's own origin, always passes) → per-IP budget → visitor token
 * (conversation routes) → per-conversation message budget. Preflights are answered 204 for any origin
 * (the request that follows is what an unlisted origin is refused).
 */
export function widgetAccessHook(deps: { db: Kysely<Database>; widget: WidgetService; store: RateLimitStore; limits: WidgetLimits; publicUrl: string }) {
  const { db, widget, store, limits } = deps;
  const ownOrigin = new URL(deps.publicUrl).origin;

  // The agent's allowed origins, found from the path; null when the path names nothing that exists
  // (the later steps answer 401/404 then).
  async function allowedOrigins(config: WidgetRouteConfig, params: Record<string, string>): Promise<string[] | null> {
    if (config.resource === 'chatbot') {
      const bot = isId('chatbot', params.chatbot_id) ? await runtimeRepository.findChatbotById(db, params.chatbot_id) : undefined;
      return bot ? parseJson<string[]>(bot.allowed_origins, []) : null;
    }
    const owner = isId('conversation', params.conversation_id) ? await runtimeRepository.findConversationOwner(db, params.conversation_id) : undefined;
    const bot = owner ? await chatbotRepository.find(db, owner.workspace_id, owner.chatbot_id) : undefined;
    return bot ? parseJson<string[]>(bot.allowed_origins, []) : null;
  }

  function sameOrigin(request: FastifyRequest, origin: string): boolean {
    if (origin === ownOrigin) return true;
    // The hosted chat page is served by this service, whatever name it was reached by.
    const host = request.headers.host;
    return typeof host === 'string' && (origin === `http://${host}` || origin === `https://${host}`);
  }

  // Stored origins are normalized on write; older rows (and odd Origin headers) are normalized here too.
  function isAllowed(allowed: string[], origin: string): boolean {
    const wanted = normalizeOrigin(origin);
    return allowed.some((entry) => entry === '*' || (wanted !== null && normalizeOrigin(entry) === wanted));
  }

  async function cors(request: FastifyRequest, reply: FastifyReply, config: WidgetRouteConfig): Promise<void> {
    const origin = request.headers.origin;
    if (typeof origin !== 'string') return;
    // Every answer to a browser names its origin, a refusal included: a preflight passes and the refusal
    // that follows is readable, so the widget can say "not enabled on this website" instead of "offline".
    // That is safe: a refusal carries no data (no token, no message, no conversation), only the problem,
    // and every route still refuses that origin before doing anything.
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Vary', 'Origin');
    reply.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    if (config.preflight || sameOrigin(request, origin)) return;
    const allowed = await allowedOrigins(config, request.params as Record<string, string>);
    // An empty list allows no other site: a new agent is embeddable only where its owner says so.
    if (allowed !== null && !isAllowed(allowed, origin)) {
      throw new AppError('origin_not_allowed', `This AI Agent does not accept requests from ${origin.slice(0, 200)}; add it to the agent's allowed_origins.`);
    }
    const website = normalizeOrigin(origin);
    if (website !== null) websites.set(request, website);
  }

  return async function widgetAccess(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config.widget;
    if (!config) return;
    await cors(request, reply, config);
    if (config.preflight) {
      reply
        .code(204)
        .header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS')
        .header('Access-Control-Allow-Headers', ALLOW_HEADERS)
        .header('Access-Control-Max-Age', '600');
      if (typeof request.headers.origin !== 'string') reply.header('Vary', 'Origin');
      await reply.send();
      return;
    }
    await spendBudgets(store, [{ policy: 'ip', id: budgetKeyOf(request.ip), limit: limits.ratePerIpPerMinute, windowMs: 60_000 }], reply);
    if (config.resource !== 'conversation') return;
    const token = bearer(request);
    if (token === null) {
      throw new AppError('invalid_visitor_token', 'Send the visitor token as "Authorization: Bearer <visitor_token>".', {}, { 'WWW-Authenticate': REALM });
    }
    const session = await widget.authenticate(token);
    if (!session) {
      throw new AppError('invalid_visitor_token', 'The visitor token is not recognised.', {}, { 'WWW-Authenticate': `${REALM}, error="invalid_token"` });
    }
    const conversationId = (request.params as { conversation_id: string }).conversation_id;
    if (session.conversation.id !== conversationId) throw new AppError('not_found', `No conversation with id "${conversationId.slice(0, 80)}" exists for this visitor.`);
    request.visitor = session;
    if (config.messageBudget) {
      await spendBudgets(store, [{ policy: 'conversation', id: session.conversation.id, limit: limits.messagesPerConversationPerMinute, windowMs: 60_000 }], reply);
    }
  };
}

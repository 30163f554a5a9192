import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { RateLimitStore } from '../lib/rate-limit/types.js';
import { createPreview } from './preview.js';
import { agentRoutes } from './routes/agents.js';
import { auditRoutes } from './routes/audit.js';
import { authRoutes } from './routes/auth.js';
import { conversationRoutes } from './routes/conversations.js';
import { eventStreamRoutes } from './routes/events.js';
import { homeRoutes } from './routes/home.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { EventStreams } from '../modules/events/streams.js';
import { leadRoutes } from './routes/leads.js';
import { providerRoutes } from './routes/provider.js';
import type { ProviderSettingsService } from '../modules/provider-settings/service.js';
import { settingsRoutes } from './routes/settings.js';
import { sourceRoutes } from './routes/sources.js';
import { sessionHook } from './session.js';
import { publicRouteBudget, signInLimiter } from './sign-in-limit.js';
import { registerWebApp } from './static.js';

/** What the dashboard needs besides the app's services and config. */
export interface DashboardDeps {
  rateLimitStore: RateLimitStore;
  /** The live event streams (the dashboard's own follows the workspace). */
  streams: EventStreams;
  /** The instance's model provider settings (Settings → Model provider). */
  providerSettings: ProviderSettingsService;
}

/**
 * The web dashboard: the session-authenticated JSON API under /app/api (hidden from the public OpenAPI
 * document) over the same services, schemas and problem details as /api/v1, and the built single-page app.
 */
export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { services, config } = app;
  const api: FastifyPluginAsyncTypebox = async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    // The public routes' per-IP budget first: before the session lookup and before any body is read.
    scope.addHook('onRequest', publicRouteBudget(deps.rateLimitStore, config.signInLimit));
    scope.addHook('onRequest', sessionHook(services.sessions, config));
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('Cache-Control', 'no-store');
    });
    await scope.register(authRoutes(services, config, signInLimiter(deps.rateLimitStore, config.signInLimit)));
    await scope.register(agentRoutes(services, createPreview(services, app.runtime.worker)));
    await scope.register(conversationRoutes(services));
    await scope.register(eventStreamRoutes(deps.streams));
    await scope.register(webhookRoutes(services));
    await scope.register(leadRoutes(services));
    await scope.register(settingsRoutes(services));
    await scope.register(homeRoutes(services));
    await scope.register(providerRoutes(deps.providerSettings));
    await scope.register(auditRoutes(services));
    await scope.register(sourceRoutes(services, { maxFileBytes: config.sources.maxFileBytes }));
  };
  await app.register(api, { prefix: '/app/api' });
  registerWebApp(app);

  const sweeper = setInterval(() => {
    services.sessions.sweep().catch((error: unknown) => app.log.warn({ err: error }, 'session sweep failed'));
  }, 60 * 60_000);
  sweeper.unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
}

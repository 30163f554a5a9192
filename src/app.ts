import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { prepareDatabase, type DatabaseHandle } from './db/database.js';
import { logCompletedRequest } from './http/access-log.js';
import { accessPolicy } from './http/auth.js';
import { clientErrorHandler } from './http/client-errors.js';
import { proxyTrust } from './http/client-ip.js';
import { registerDocs } from './http/docs.js';
import { frameworkErrorHandler, installErrorHandling } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { idempotencyLayer } from './http/idempotency.js';
import { installSerializer } from './http/serializer.js';
import { installJsonBodies } from './http/json-body.js';
import { registerHealth } from './http/health.js';
import { registerOpenApi, widgetDocument } from './http/openapi.js';
import { rateLimitHook } from './http/rate-limit.js';
import { installReplyHelpers } from './http/replies.js';
import { requestIdFor } from './http/request-id.js';
import { validatorCompiler } from './http/validation.js';
import { widgetAssets } from './http/widget-assets.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type LogDestination } from './lib/logger.js';
import { MemoryRateLimitStore } from './lib/rate-limit/memory-store.js';
import { RedisRateLimitStore } from './lib/rate-limit/redis-store.js';
import type { RateLimitStore } from './lib/rate-limit/types.js';
import { analyticsRoutes } from './modules/analytics/routes.js';
import { chatbotRoutes } from './modules/chatbots/routes.js';
import { conversationRoutes } from './modules/conversations/routes.js';
import { leadRoutes } from './modules/leads/routes.js';
import { eventRoutes } from './modules/events/routes.js';
import { createLiveEvents } from './modules/events/live.js';
import { createEventStreams } from './modules/events/streams.js';
import { messageRoutes } from './modules/messages/routes.js';
import type { ReplyEngine } from './modules/replies/engine.js';
import { createIdleCloser } from './modules/runtime/idle-close.js';
import { createRetentionSweeper, type RetentionSweepResult } from './modules/retention/sweep.js';
import { delayedEngine } from './modules/runtime/delayed-engine.js';
import { openAiEmbedder } from './modules/knowledge/embedder.js';
import { createKnowledgeSearch } from './modules/knowledge/retrieval.js';
import { createReplyEngine } from './modules/replies/index.js';
import { resolveSecretKey } from './modules/provider-settings/crypto.js';
import { createProviderSettingsService } from './modules/provider-settings/service.js';
import { createReplyWorker, durableReplies, type ReplyWorker } from './modules/runtime/reply-worker.js';
import { widgetAccessHook } from './modules/runtime/widget-access.js';
import { widgetRoutes } from './modules/runtime/widget-routes.js';
import { createWidgetService } from './modules/runtime/widget-service.js';
import { createIngestRunner } from './modules/sources/ingestion.js';
import { sourceRoutes } from './modules/sources/routes.js';
import { createAuditWriter } from './modules/audit/writer.js';
import { createWebhookRunner } from './modules/webhooks/delivery.js';
import { webhookSecrets } from './modules/webhooks/secrets.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { createServices, type Services } from './services.js';
import { createMailer } from './modules/mail/mailer.js';
import { mailNotifications } from './modules/mail/notifications.js';
import { createMailRunner } from './modules/mail/queue.js';
import { registerDashboard } from './dashboard/plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    database: DatabaseHandle;
    /** The shared rate-limit store when REDIS_URL is set. */
    redis: RedisRateLimitStore | null;
    config: Config;
    /** The chat runtime: the durable reply worker, the idle sweep and the retention sweep (finished mail and webhook deliveries). */
    runtime: { worker: ReplyWorker; sweepIdle(): Promise<number>; sweepRetention(): Promise<RetentionSweepResult> };
  }
}

/** Things tests (and later deployments) may replace. */
export interface AppOverrides {
  clock?: Clock;
  rateLimitStore?: RateLimitStore;
  /** Produces the agents' answers (tests pass slow or failing ones). */
  replyEngine?: ReplyEngine;
  /**
   * false: the background reply worker does not run (suites that build exact fixtures through /api/v1 and
   * must not see agent answers appear); jobs are still recorded, and widget requests still answer inline.
   */
  replyWorker?: boolean;
  /** Where log lines go (stdout by default); tests read them. */
  logDestination?: LogDestination;
}

/** How often the idle sweep runs. */
const IDLE_SWEEP_INTERVAL_MS = 60_000;

/**
 * The composition root: opens and migrates the database, builds the services and registers, in order,
 * infrastructure (ids, logging, errors, parsers, OpenAPI, health) and then the /api/v1 resources.
 */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const { handle: database } = await prepareDatabase(config.database);
  const clock = overrides.clock ?? systemClock;
  const logger = createLogger(config, overrides.logDestination) as FastifyBaseLogger;
  // Retrieval over the agents' sources: full text, fused with vectors when EMBEDDINGS_PROVIDER is set.
  const knowledge = createKnowledgeSearch(config.sources.embeddings ? openAiEmbedder(config.sources.embeddings, config.llm.timeoutMs) : null, logger);
  // The key of the secrets stored in the database (provider API keys, webhook signing secrets).
  const secretKey = resolveSecretKey(config.secretKey, config.database, logger);
  // The model provider: LLM_PROVIDER & co. when set, else what the instance's owner saved in the dashboard (read per reply).
  const providerSettings = createProviderSettingsService({ db: database.db, clock, audit: createAuditWriter(clock), llm: config.llm, llmEnvironment: config.llmEnvironment, secretKey });
  // The one place the reply engine is chosen: the provider in effect, unless a test passes an engine.
  const engine = delayedEngine(overrides.replyEngine ?? createReplyEngine({ db: database.db, llm: config.llm, logger, knowledge, effectiveLlm: providerSettings.effectiveLlm }), config.runtime.replyDelayMs);
  let worker: ReplyWorker | null = null;
  const wakeJobs = () => worker?.nudge();
  const mailer = createMailer(config.mail);
  const services = createServices({ db: database.db, clock, replies: durableReplies(clock, wakeJobs), cacheMaxBytes: config.cacheMaxBytes, sources: config.sources, wakeJobs, knowledge, webhooks: config.webhooks, secretKey,
    // Live streams hear of each event once its transaction commits.
    eventListeners: [(trx, event) => database.signals.signal(trx, event.workspace_id), ...(mailer.enabled ? [mailNotifications(clock, config.notifications.mailPerHour, config.publicUrl, wakeJobs)] : [])],
    // The one mailer (SMTP_URL); it sends nothing when mail is off.
    mail: { mailer, publicUrl: config.publicUrl, log: logger } });
  // Webhook secrets an older version stored in clear are encrypted before anything is served (a migration
  // cannot: it runs without the key). Without a key to do it, the start fails in words.
  const encrypted = await services.webhooks.encryptClearSecrets().catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  if (encrypted > 0) logger.info(`Encrypted the signing secrets of ${encrypted} webhook endpoint(s) stored in clear by an earlier version`);
  const live = createLiveEvents({ db: database.db, signals: database.signals, log: logger });
  // Every SSE stream of live events goes through these limits (per client address, per conversation, lifetime).
  const streams = createEventStreams({ live, limits: config.streams });
  const idempotency = idempotencyLayer(database.db, clock);

  const app = Fastify({
    loggerInstance: logger,
    genReqId: requestIdFor,
    // One log line per request (written when it completes, by the hook below) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: proxyTrust(config.trustProxy),
    // Shutdown's 503 is answered by the first hook below, as problem details (Fastify's own is not).
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // Long enough for any path the service gets (Node refuses headers over 16 kB): an over-long id must
    // still reach its route, so it is authenticated before the id is judged (404), never a 404 without auth.
    routerOptions: { maxParamLength: 16_384 },
    ajv: { customOptions: { removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const redisStore = config.redis
    ? new RedisRateLimitStore(config.redis.url, config.redis.onFailure, new MemoryRateLimitStore(() => clock.monotonicMs()), {
        log: app.log,
        now: () => clock.monotonicMs(),
      })
    : null;
  const rateLimitStore = overrides.rateLimitStore ?? redisStore ?? new MemoryRateLimitStore(() => clock.monotonicMs());
  const replyWorker = createReplyWorker({
    db: database.db,
    clock,
    engine,
    messages: services.messages,
    log: app.log,
    leaseMs: config.runtime.leaseMs,
    pollIntervalMs: config.runtime.pollIntervalMs,
    concurrency: config.runtime.replyConcurrency,
    // The one job runner also ingests knowledge sources, in slots of their own.
    ingest: {
      runner: createIngestRunner({ db: database.db, clock, config: config.sources, log: app.log, userAgent: `ChatAgentBot/1.0 (+${config.publicUrl})`, embedder: knowledge.embedder }),
      concurrency: config.sources.ingestConcurrency,
    },
    // And webhook deliveries, from their own table, in slots of their own (WEBHOOK_CONCURRENCY).
    queues: [
      createWebhookRunner({
        db: database.db,
        clock,
        config: config.webhooks,
        audit: createAuditWriter(clock),
        log: app.log,
        leaseMs: config.runtime.leaseMs,
        userAgent: `ChatAgentWebhooks/1.0 (+${config.publicUrl})`,
        secrets: webhookSecrets(secretKey),
      }),
      // And queued emails (notifications, invitations) when mail is on.
      ...(mailer.enabled ? [createMailRunner({ db: database.db, clock, mailer, log: app.log, leaseMs: config.runtime.leaseMs })] : []),
    ],
  });
  worker = replyWorker;
  const idleCloser = createIdleCloser({ db: database.db, clock, conversations: services.conversations, idleMinutes: config.runtime.idleCloseMinutes, log: app.log });
  const retention = createRetentionSweeper({ db: database.db, clock, retention: config.retention, log: app.log });
  const widget = createWidgetService({ db: database.db, clock, conversations: services.conversations, messages: services.messages, leads: services.leads, feedback: services.feedback });

  app.decorate('services', services);
  app.decorate('redis', redisStore);
  app.decorate('database', database);
  app.decorate('config', config);
  app.decorate('runtime', { worker: replyWorker, sweepIdle: () => idleCloser.sweep(), sweepRetention: () => retention.sweep() });
  // Retention is housekeeping: it does not delay a start (its first sweep runs ten minutes in).
  const sweeper = setInterval(() => {
    idempotency.sweep().catch((error: unknown) => app.log.warn({ err: error }, 'idempotency sweep failed'));
    retention.sweep().catch((error: unknown) => app.log.warn({ err: error }, 'retention sweep failed'));
  }, 10 * 60_000);
  sweeper.unref();
  const idleSweeper = setInterval(() => {
    idleCloser.sweep().catch((error: unknown) => app.log.warn({ err: error }, 'idle close sweep failed'));
  }, IDLE_SWEEP_INTERVAL_MS);
  idleSweeper.unref();
  app.addHook('onReady', async () => {
    await idempotency.sweep();
    if (mailer.server) app.log.info(`Mail goes through ${mailer.server}`);
    else app.log.info('Mail is off (SMTP_URL is not set): nothing is emailed (password resets, invitations, notifications)');
    if (redisStore && !(await redisStore.waitUntilReady())) {
      app.log.warn(`Redis is unreachable at startup; rate limits follow the "${config.redis?.onFailure}" policy until it is back`);
    }
    // Jobs left by a crashed process (lapsed leases) are claimed on the first tick.
    if (overrides.replyWorker !== false) replyWorker.start();
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Before the server waits for open connections: replies in flight (SSE streams included) end now with
  // the fallback answer, so their connections close well within SHUTDOWN_TIMEOUT_MS.
  app.addHook('preClose', async () => replyWorker.drain());
  // Live streams end now (their clients reconnect, to another instance, with Last-Event-ID).
  app.addHook('preClose', async () => live.close());
  app.addHook('onClose', async () => {
    // Emails being sent (password resets) finish before the transport and the database close.
    await services.passwordResets.settled();
    mailer.close();
    clearInterval(sweeper);
    clearInterval(idleSweeper);
    await replyWorker.stop();
    await redisStore?.close();
    await database.close();
  });
  // Hooks on every request are synchronous (callback style): an async hook costs a promise and a turn of
  // the microtask queue per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id);
    if (closing) {
      // A request on a connection that was already open when shutdown began: another instance can take it.
      reply.header('Connection', 'close');
      done(new AppError('service_unavailable', 'The service is shutting down; retry, and another instance (or this one, restarted) will answer.', {}, { 'Retry-After': '1' }));
      return;
    }
    request.log.debug({ req: { method: request.method, url: request.url } }, 'incoming request');
    done();
  });
  app.addHook('onResponse', logCompletedRequest);

  app.setValidatorCompiler(validatorCompiler);
  installSerializer(app);
  installErrorHandling(app);
  installReplyHelpers(app);
  installJsonBodies(app);

  await registerOpenApi(app);
  registerHealth(app);
  registerDocs(app);
  await app.register(widgetAssets(database.db));

  await app.register(
    async (api) => {
      // The fixed order of cross-cutting policy: authentication → rate limit → scope (one onRequest hook on
      // each route that declares a scope, before the body is read) → validation → idempotency (preHandler,
      // POST only) → handler → stored result (onSend).
      api.addHook(
        'onRoute',
        accessPolicy({
          apiKeys: services.apiKeys,
          rateLimit: rateLimitHook(rateLimitStore, config.rateLimit),
          store: rateLimitStore,
          failedAuthPerIpPerMinute: config.failedAuthPerIpPerMinute,
        }).attach,
      );
      api.addHook('onRoute', idempotency.attachToPosts);
      api.get('/openapi', { schema: { hide: true } }, async () => app.swagger());
      await api.register(analyticsRoutes(services.analytics));
      await api.register(chatbotRoutes(services.chatbots));
      await api.register(conversationRoutes(services.conversations));
      await api.register(messageRoutes(services.messages));
      await api.register(leadRoutes(services.leads));
      await api.register(eventRoutes(services.events));
      await api.register(webhookRoutes(services.webhooks));
      await api.register(sourceRoutes(services.sources, { maxFileBytes: config.sources.maxFileBytes }));
    },
    { prefix: '/api/v1' },
  );
  await registerDashboard(app, { rateLimitStore, streams, providerSettings });

  await app.register(
    async (publicApi) => {
      // CORS → per-IP budget → visitor token → per-conversation budget (src/modules/runtime/widget-access.ts).
      publicApi.addHook(
        'onRequest',
        widgetAccessHook({ db: database.db, widget, store: rateLimitStore, limits: config.widget, publicUrl: config.publicUrl }),
      );
      publicApi.get('/openapi', { schema: { hide: true } }, async () => widgetDocument(app));
      await publicApi.register(widgetRoutes(widget, replyWorker, streams));
    },
    { prefix: '/widget/v1' },
  );

  return app;
}

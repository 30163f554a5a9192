import type { Kysely } from 'kysely';
import { createReadCache } from './db/read-cache.js';
import type { Database } from './db/schema.js';
import { loadConfig, type SourcesConfig, type WebhooksConfig } from './config.js';
import type { Clock } from './lib/clock.js';
import { createAnalyticsService } from './modules/analytics/service.js';
import { createApiKeyService } from './modules/api-keys/service.js';
import { createChatbotService } from './modules/chatbots/service.js';
import { createConversationService } from './modules/conversations/service.js';
import { createLeadService } from './modules/leads/service.js';
import { createMessageService, noReplies, type ReplyRequester } from './modules/messages/service.js';
import { createWorkspaceService } from './modules/workspaces/service.js';
import { createAuditService } from './modules/audit/service.js';
import { createAuditWriter } from './modules/audit/writer.js';
import { createEventService } from './modules/events/service.js';
import { createEventWriter, type EventListener } from './modules/events/writer.js';
import { createInvitationService } from './modules/invitations/service.js';
import { createSessionService } from './modules/sessions/service.js';
import { createUserService } from './modules/users/service.js';
import { createSourceService } from './modules/sources/service.js';
import { createFeedbackService } from './modules/feedback/service.js';
import { createKnowledgeSearch, type KnowledgeSearch } from './modules/knowledge/retrieval.js';
import { webhookQueue } from './modules/webhooks/queue.js';
import { createWebhookService } from './modules/webhooks/service.js';
import { webhookSecrets } from './modules/webhooks/secrets.js';
import type { SecretKey } from './modules/provider-settings/crypto.js';
import { mailOff, type Mailer } from './modules/mail/mailer.js';
import { createPasswordResetService } from './modules/users/password-reset.js';
import { invitationMailer } from './modules/mail/invitations.js';
import { createMailPreferenceService } from './modules/mail/preferences.js';

/** What the services are built from. */
export interface ServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  replies?: ReplyRequester;
  /** Bytes of the read cache of API keys and agents (embedded SQLite only; 0: none, as for the CLI). */
  cacheMaxBytes?: number;
  /** Knowledge-source limits (the defaults when absent: the CLI, the demo seeder). */
  sources?: SourcesConfig;
  /** Tells the job runner a job was queued (ingestion), so it starts without waiting for its next poll. */
  wakeJobs?: () => void;
  /** Knowledge retrieval (hybrid when embeddings are configured); full text alone when absent (the CLI). */
  knowledge?: KnowledgeSearch;
  /** Run with every domain event, in its transaction (live streams told on commit, webhook deliveries queued). */
  eventListeners?: readonly EventListener[];
  /** Webhook settings (the defaults when absent: the CLI, the demo seeder). */
  webhooks?: WebhooksConfig;
  /** The key stored secrets (webhook signing secrets) are encrypted under; none when absent (the CLI, the demo seeder): nothing secret can be stored. */
  secretKey?: SecretKey;
  /** Outgoing mail and where its links point (mail off when absent: the CLI, the demo seeder). */
  mail?: { mailer: Mailer; publicUrl: string; log: { warn(details: object, message: string): void } };
}

const fullTextSearch = createKnowledgeSearch(null, { warn: () => undefined });

/** Builds every domain service over one database; shared by the HTTP app and the CLI. */
export function createServices({ db, clock, replies = noReplies, cacheMaxBytes = 0, sources = loadConfig({}).sources, wakeJobs, knowledge = fullTextSearch, eventListeners = [], webhooks = loadConfig({}).webhooks, secretKey = { key: null, origin: { kind: 'none' } }, mail = { mailer: mailOff, publicUrl: '', log: { warn: () => undefined } } }: ServiceDeps) {
  const audit = createAuditWriter(clock);
  // Webhook deliveries are queued with every event, whoever writes it (the API, the runtime, the CLI).
  const events = createEventWriter(clock, [...eventListeners, webhookQueue(clock, wakeJobs)]);
  const cache = createReadCache(db, cacheMaxBytes);
  const conversations = createConversationService(db, clock, audit, events);
  const users = createUserService(db, clock, audit);
  return {
    workspaces: createWorkspaceService(db, clock, audit),
    apiKeys: createApiKeyService(db, clock, audit, cache),
    chatbots: createChatbotService(db, clock, audit, events, cache, { embed: knowledge.embedder !== null }, wakeJobs),
    conversations,
    messages: createMessageService(db, clock, audit, events, conversations, replies),
    leads: createLeadService(db, clock, audit, events),
    events: createEventService(db),
    analytics: createAnalyticsService(db, clock),
    audit: createAuditService(db, clock),
    users,
    sessions: createSessionService(db, clock, audit),
    invitations: createInvitationService(db, clock, audit, users, mail.mailer.enabled ? invitationMailer(clock, mail.publicUrl, wakeJobs) : undefined),
    mailPreferences: createMailPreferenceService(db, audit, mail.mailer.enabled),
    feedback: createFeedbackService(db, clock, audit, conversations),
    sources: createSourceService(db, clock, audit, events, sources, knowledge, wakeJobs),
    webhooks: createWebhookService(db, clock, audit, webhooks, webhookSecrets(secretKey), wakeJobs),
    passwordResets: createPasswordResetService({ db, clock, users, ...mail }),
  };
}

export type Services = ReturnType<typeof createServices>;

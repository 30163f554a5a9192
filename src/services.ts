import type { Kysely } from 'kysely';
import type { Database } from './db/schema.js';
import type { Clock } from './lib/clock.js';
import { createAnalyticsService } from './modules/analytics/service.js';
import { createApiKeyService } from './modules/api-keys/service.js';
import { createChatbotService } from './modules/chatbots/service.js';
import { createConversationService } from './modules/conversations/service.js';
import { createLeadService } from './modules/leads/service.js';
import { createMessageService, noReplies, type ReplyRequester } from './modules/messages/service.js';
import { createWorkspaceService } from './modules/workspaces/service.js';

/** What the services are built from. */
export interface ServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  replies?: ReplyRequester;
}

/** Builds every domain service over one database; shared by the HTTP app and the CLI. */
export function createServices({ db, clock, replies = noReplies }: ServiceDeps) {
  const conversations = createConversationService(db, clock);
  return {
    workspaces: createWorkspaceService(db, clock),
    apiKeys: createApiKeyService(db, clock),
    chatbots: createChatbotService(db, clock),
    conversations,
    messages: createMessageService(db, clock, conversations, replies),
    leads: createLeadService(db, clock),
    analytics: createAnalyticsService(db, clock),
  };
}

export type Services = ReturnType<typeof createServices>;

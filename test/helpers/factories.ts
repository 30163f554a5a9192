import type { FastifyInstance } from 'fastify';
import { systemContext } from '../../src/lib/actor.js';
import type { Tenant } from './app.js';

/** Creates an AI Agent through the API and returns its body. */
export async function makeChatbot(tenant: Tenant, overrides: Record<string, unknown> = {}) {
  const response = await tenant.request('POST', '/api/v1/chatbots', { name: 'Test agent', instructions: 'Be helpful.', ...overrides });
  if (response.statusCode !== 201) throw new Error(`makeChatbot: ${response.statusCode} ${response.body}`);
  return response.json();
}

/** Creates a lead through the API and returns its body. */
export async function makeLead(tenant: Tenant, overrides: Record<string, unknown> = {}) {
  const response = await tenant.request('POST', '/api/v1/leads', { name: 'Ada', email: `ada+${Math.random().toString(36).slice(2, 8)}@example.com`, ...overrides });
  if (response.statusCode !== 201) throw new Error(`makeLead: ${response.statusCode} ${response.body}`);
  return response.json();
}

/**
 * Starts a conversation with an agent. Conversations are not created through /api/v1 (the chat runtime
 * starts them), so this goes through the service, as the runtime does.
 */
export async function makeConversation(app: FastifyInstance, tenant: Tenant, chatbotId?: string) {
  const botId = chatbotId ?? (await makeChatbot(tenant)).id;
  return app.services.conversations.start(systemContext(tenant.workspaceId, 'test'), { chatbotId: botId, channel: 'widget', visitor: { name: 'Visitor' } });
}

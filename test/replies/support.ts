import type { Selectable } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import type { MessagesTable } from '../../src/db/schema.js';
import { systemContext } from '../../src/lib/actor.js';
import { chatbotRepository } from '../../src/modules/chatbots/repository.js';
import type { MessageView } from '../../src/modules/messages/schema.js';
import { createReplyEngine, type ReplyEngine, type ReplyInput } from '../../src/modules/replies/index.js';
import type { TestApp, Tenant } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';

/** A reply engine configured from environment variables, with its log lines captured. */
export function engineWith(t: TestApp, env: Record<string, string>): { engine: ReplyEngine; logs(): Array<Record<string, unknown>>; rawLogs(): string } {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const { llm } = loadConfig(env);
  return {
    engine: createReplyEngine({ db: t.app.database.db, llm, logger }),
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    rawLogs: () => lines.join(''),
  };
}

/** A conversation with an agent (made through the API) and these turns, as the reply engine receives it. */
export async function conversationWith(
  t: TestApp,
  tenant: Tenant,
  agent: Record<string, unknown>,
  turns: Array<[MessageView['role'], string]>,
): Promise<{ input: ReplyInput; conversationId: string }> {
  const bot = await makeChatbot(tenant, agent);
  const ctx = systemContext(tenant.workspaceId, 'test');
  const conversation = await t.app.services.conversations.start(ctx, { chatbotId: bot.id, channel: 'widget', visitor: { name: 'Visitor' } });
  const authors = { user: { type: 'visitor', id: 'visitor_1' }, assistant: { type: 'agent', id: bot.id }, operator: { type: 'user', id: 'usr_1' } } as const;
  // The turns exactly as given: the app's job runner may answer a visitor turn meanwhile, which is not one of them.
  const ids: string[] = [];
  for (const [role, content] of turns) {
    ids.push((await t.app.services.messages.append(ctx, conversation.id, { role, content, author: authors[role] })).id);
  }
  const db = t.app.database.db;
  const chatbot = (await chatbotRepository.find(db, tenant.workspaceId, bot.id))!;
  const transcript: Array<Selectable<MessagesTable>> = await db
    .selectFrom('messages')
    .selectAll()
    .where('workspace_id', '=', tenant.workspaceId)
    .where('conversation_id', '=', conversation.id)
    .where('id', 'in', ids.length > 0 ? ids : [''])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { input: { workspaceId: tenant.workspaceId, chatbot, transcript }, conversationId: conversation.id };
}

/** Collects what a reply streams: the deltas, and resets as a marker. */
export function streamRecorder(): { deltas: string[]; onDelta(text: string): void; onReset(): void } {
  const deltas: string[] = [];
  return { deltas, onDelta: (text) => deltas.push(text), onReset: () => deltas.push('<reset>') };
}

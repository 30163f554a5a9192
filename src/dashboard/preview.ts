import { AppError } from '../http/errors.js';
import type { OperationContext } from '../lib/actor.js';
import type { MessageView } from '../modules/messages/schema.js';
import type { Services } from '../services.js';

const POLL_MS = 100;

/**
 * The live preview: the dashboard user talks to an agent (drafts included) in a conversation of channel
 * `dashboard`. The user's message goes through the message service like any visitor's, so the chat
 * runtime answers it durably; the request then waits (bounded) for that answer to be stored.
 */
export function createPreview(services: Services, timeoutMs: number) {
  async function answerAfter(ctx: OperationContext, conversationId: string, message: MessageView): Promise<MessageView | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const page = await services.messages.list(ctx, conversationId, { created_after: message.created_at, limit: 20 });
      const reply = page.data.find((m) => m.role === 'assistant' && m.created_at > message.created_at);
      if (reply) return reply;
      if (Date.now() >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  return {
    /** Starts a preview conversation with an agent of the workspace, whatever its status. */
    async start(ctx: OperationContext, chatbotId: string) {
      const { chatbot } = await services.chatbots.get(ctx, chatbotId);
      const conversation = await services.conversations.start(ctx, { chatbotId: chatbot.id, channel: 'dashboard', visitor: { name: ctx.actor.name }, metadata: { preview: 'true' } });
      return { conversation, welcome_message: chatbot.welcome_message };
    },

    /** Sends the user's message and returns it with the agent's stored answer (null if none came in time). */
    async send(ctx: OperationContext, chatbotId: string, conversationId: string, content: string) {
      const conversation = await services.conversations.load(ctx, conversationId);
      if (conversation.chatbot_id !== chatbotId || conversation.channel !== 'dashboard') {
        throw AppError.notFound('preview conversation', conversationId);
      }
      const message = await services.messages.append(ctx, conversationId, { role: 'user', content, author: { type: 'user', id: ctx.actor.id } });
      return { message, reply: await answerAfter(ctx, conversationId, message) };
    },
  };
}

export type Preview = ReturnType<typeof createPreview>;

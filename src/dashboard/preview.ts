import { AppError } from '../http/errors.js';
import type { OperationContext } from '../lib/actor.js';
import type { MessageView } from '../modules/messages/schema.js';
import type { ReplyWorker } from '../modules/runtime/reply-worker.js';
import type { Services } from '../services.js';

/**
 * The live preview: the dashboard user talks to an agent (drafts included) in a conversation of channel
 * `dashboard`. The user's message goes through the message service like any visitor's (so its reply job is
 * recorded durably in the same transaction), and the request then has the chat runtime answer it now.
 */
export function createPreview(services: Services, worker: Pick<ReplyWorker, 'answerNow'>) {
  return {
    /** Starts a preview conversation with an agent of the workspace, whatever its status. */
    async start(ctx: OperationContext, chatbotId: string) {
      const { chatbot } = await services.chatbots.get(ctx, chatbotId);
      const conversation = await services.conversations.start(ctx, {
        chatbotId: chatbot.id,
        channel: 'dashboard',
        visitor: { name: ctx.actor.name },
        metadata: { preview: 'true' },
      });
      return { conversation, welcome_message: chatbot.welcome_message };
    },

    /** Sends the user's message and returns it with the agent's stored answer (null when none is due or it failed). */
    async send(ctx: OperationContext, chatbotId: string, conversationId: string, content: string): Promise<{ message: MessageView; reply: MessageView | null }> {
      const conversation = await services.conversations.load(ctx, conversationId);
      if (conversation.chatbot_id !== chatbotId || conversation.channel !== 'dashboard') throw AppError.notFound('preview conversation', conversationId);
      const message = await services.messages.append(ctx, conversationId, { role: 'user', content, author: { type: 'user', id: ctx.actor.id } });
      const outcome = await worker.answerNow(ctx.actor.workspaceId, message.id);
      return { message, reply: outcome?.status === 'answered' ? outcome.reply : null };
    },
  };
}

export type Preview = ReturnType<typeof createPreview>;

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Db } from '../../db/schema.js';
import { isId } from '../../lib/ids.js';
import { chatPage, noticePage, type HtmlPage } from './page.js';
import { chatPageRepository } from './repository.js';

function sendPage(reply: FastifyReply, status: number, page: HtmlPage) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', page.csp)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'no-store')
    .send(page.html);
}

/** `GET /chat/{chatbot_id}`: the hosted full-page chat of an active agent, or a friendly notice. */
export function chatPageRoutes(db: Db) {
  return async function routes(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { chatbotId: string } }>('/chat/:chatbotId', { schema: { hide: true } }, async (request, reply) => {
      const { chatbotId } = request.params;
      // A malformed id never reaches SQL.
      const chatbot = isId('chatbot', chatbotId) ? await chatPageRepository.findChatbot(db, chatbotId) : undefined;
      if (!chatbot) {
        return sendPage(reply, 404, noticePage('Chat not found', 'There is no chat at this address. Please check the link you followed.'));
      }
      if (chatbot.status !== 'active') {
        return sendPage(reply, 409, noticePage('Chat unavailable', `${chatbot.name} is not taking conversations right now. Please try again later.`));
      }
      return sendPage(reply, 200, chatPage(chatbot));
    });
  };
}

import { hash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import type { OperationContext, RequestContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { assertAgentTalks } from '../chatbots/availability.js';
import { presentChatbot } from '../chatbots/presenter.js';
import { chatbotRepository } from '../chatbots/repository.js';
import { conversationRepository, type ConversationRow } from '../conversations/repository.js';
import type { ConversationService } from '../conversations/service.js';
import type { LeadView } from '../leads/schema.js';
import type { LeadService } from '../leads/service.js';
import type { ListMessagesFilters, MessageView } from '../messages/schema.js';
import type { MessageService } from '../messages/service.js';
import { runtimeRepository, visitorTokenRepository } from './repository.js';
import type { FeedbackBodyInput, HandoffResultView, StartConversationBodyInput, StartedConversationView, VisitorLeadInput, WidgetConfigView } from './schema.js';
import type { FeedbackService } from '../feedback/service.js';
import { handoffAnswer } from '../replies/answers.js';
import { langOfLocale, replyLanguage } from '../replies/language.js';

/** A visitor authenticated by their token: the one conversation it opens. */
export interface VisitorSession {
  workspaceId: string;
  conversation: ConversationRow;
}

/** SHA-256 (hex) of a visitor token: what is stored and looked up. */
export function visitorTokenHash(token: string): string {
  return hash('sha256', token, 'hex');
}

function newVisitorToken(): string {
  return `vtk_${randomBytes(32).toString('base64url')}`;
}

/** The operation context of a visitor: audited as `visitor` with their id and name. */
export function visitorContext(workspaceId: string, visitor: { id: string; name: string | null }, request: RequestContext): OperationContext {
  return { actor: { type: 'visitor', id: visitor.id, name: visitor.name ?? 'visitor', workspaceId }, request };
}

/** What the widget endpoints do: start a conversation, authenticate its token, messages and the lead. */
export function createWidgetService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  conversations: ConversationService;
  messages: MessageService;
  leads: LeadService;
  feedback: FeedbackService;
}) {
  const { db, clock, conversations, messages, leads, feedback } = deps;

  function sessionContext(session: VisitorSession, request: RequestContext): OperationContext {
    return visitorContext(session.workspaceId, { id: session.conversation.visitor_id, name: session.conversation.visitor_name }, request);
  }

  return {
    /** The agent as the widget presents it (look, title, first words), whatever its state: starting a conversation says whether it talks. */
    async config(chatbotId: string): Promise<WidgetConfigView> {
      const bot = isId('chatbot', chatbotId) ? await runtimeRepository.findChatbotById(db, chatbotId) : undefined;
      if (!bot) throw new AppError('not_found', `No AI Agent with id "${chatbotId.slice(0, 80)}" exists.`);
      const view = presentChatbot(bot);
      return {
        id: view.id,
        name: view.name,
        title: view.appearance.title ?? view.name,
        welcome_message: view.welcome_message,
        suggested_questions: view.suggested_questions,
        language: view.language,
        translations: view.translations,
        appearance: view.appearance,
      };
    },

    /**
     * Starts a widget conversation with an active agent and issues the visitor's token (stored as a hash);
     * `website` is the site the widget runs on (null: the hosted page).
     */
    async start(request: RequestContext, chatbotId: string, input: StartConversationBodyInput, website: string | null = null): Promise<StartedConversationView> {
      const bot = isId('chatbot', chatbotId) ? await runtimeRepository.findChatbotById(db, chatbotId) : undefined;
      if (!bot) throw new AppError('not_found', `No AI Agent with id "${chatbotId.slice(0, 80)}" exists.`);
      if (bot.status !== 'active') throw new AppError('chatbot_not_active', 'This AI Agent is not taking conversations right now.');
      const now = clock.now();
      const visitor = { id: newId('visitor', now.getTime()), name: input.visitor?.name ?? null };
      const ctx = visitorContext(bot.workspace_id, visitor, request);
      const token = newVisitorToken();
      const conversation = await inTransaction(db, ctx, async (trx) => {
        const started = await conversations.start(
          { ...ctx, trx },
          { chatbotId: bot.id, channel: 'widget', visitorId: visitor.id, visitor: { name: visitor.name, email: input.visitor?.email ?? null }, origin: website, locale: input.locale ?? null },
        );
        await visitorTokenRepository.insert(trx, { token_hash: visitorTokenHash(token), workspace_id: bot.workspace_id, conversation_id: started.id, created_at: now.toISOString() });
        return started;
      });
      const view = presentChatbot(bot);
      const locale = langOfLocale(input.locale);
      const translated = locale ? view.translations[locale] : undefined;
      return {
        conversation_id: conversation.id,
        visitor_token: token,
        welcome_message: translated?.welcome_message ?? view.welcome_message,
        chatbot: { id: view.id, name: view.name, lead_capture: view.lead_capture, language: view.language, suggested_questions: view.suggested_questions, translations: view.translations },
      };
    },

    /** The conversation a token opens, or null for an unknown token. */
    async authenticate(token: string): Promise<VisitorSession | null> {
      const found = await visitorTokenRepository.find(db, visitorTokenHash(token));
      if (!found) return null;
      const conversation = await conversationRepository.find(db, found.workspace_id, found.conversation_id);
      return conversation ? { workspaceId: found.workspace_id, conversation } : null;
    },

    /** Stores the visitor's message (its reply job commits with it); 409 when the conversation is closed or its agent stopped. */
    async send(session: VisitorSession, request: RequestContext, content: string): Promise<MessageView> {
      return messages.append(sessionContext(session, request), session.conversation.id, {
        role: 'user',
        content,
        author: { type: 'visitor', id: session.conversation.visitor_id },
      });
    },

    /** The conversation's messages, oldest first, with the API's pagination. */
    async list(session: VisitorSession, request: RequestContext, query: ListMessagesFilters): Promise<Page<MessageView>> {
      return messages.list(sessionContext(session, request), session.conversation.id, query);
    },

    /**
     * Captures the visitor's contact details as the conversation's lead (source `widget`). A conversation
     * has one lead: a second submission updates it with the fields given. 409 once the agent is paused or archived.
     */
    async submitLead(session: VisitorSession, request: RequestContext, input: VisitorLeadInput): Promise<LeadView> {
      const ctx = sessionContext(session, request);
      return inTransaction(db, ctx, async (trx) => {
        const conversation = await conversations.load({ ...ctx, trx }, session.conversation.id, { forUpdate: true });
        assertAgentTalks(await chatbotRepository.find(trx, session.workspaceId, conversation.chatbot_id), conversation);
        if (conversation.lead_id) return (await leads.update({ ...ctx, trx }, conversation.lead_id, input)).lead;
        return (await leads.create({ ...ctx, trx }, { ...input, conversation_id: conversation.id }, 'widget')).lead;
      });
    },

    /** Rates one of the agent's answers in the visitor's conversation (404 for any other message). */
    async rate(session: VisitorSession, request: RequestContext, messageId: string, input: FeedbackBodyInput): Promise<MessageView> {
      return feedback.rate(sessionContext(session, request), session.conversation.id, messageId, input);
    },

    /**
     * The visitor asks for a person: marks the conversation as waiting for one and stores the agent's answer
     * saying so (asking for contact details when lead capture is on and none are known). Idempotent: a second
     * request keeps the first time and adds no answer. In human mode an operator is already there: no answer.
     */
    async handoff(session: VisitorSession, request: RequestContext): Promise<HandoffResultView> {
      const ctx = sessionContext(session, request);
      return inTransaction(db, ctx, async (trx) => {
        const conversation = await conversations.load({ ...ctx, trx }, session.conversation.id, { forUpdate: true });
        if (conversation.handoff_requested_at !== null) return { handoff_requested_at: conversation.handoff_requested_at, reply: null };
        if (conversation.status === 'closed') throw new AppError('conversation_closed', 'This conversation is closed; start a new one.');
        const chatbot = await chatbotRepository.find(trx, session.workspaceId, conversation.chatbot_id);
        assertAgentTalks(chatbot, conversation);
        if (!chatbot || conversation.mode === 'human') {
          const marked = await conversations.markHandoff({ ...ctx, trx }, conversation, clock.now().toISOString());
          return { handoff_requested_at: marked.handoff_requested_at!, reply: null };
        }
        const hasContact = conversation.lead_id !== null || conversation.visitor_email !== null;
        // The visitor's language: the browser's, else the agent's (the button says nothing to detect).
        const language = replyLanguage('', { agent: chatbot.language, locale: conversation.locale });
        // The answer is an `handoff` turn: appending it marks the conversation (one path with the engine's own handoffs).
        const reply = await messages.append({ ...ctx, trx }, conversation.id, {
          role: 'assistant',
          content: handoffAnswer(chatbot, hasContact, language),
          author: { type: 'agent', id: chatbot.id },
          answer: { sources: [], outcome: 'handoff', question: null },
        });
        const marked = await conversations.load({ ...ctx, trx }, conversation.id);
        return { handoff_requested_at: marked.handoff_requested_at!, reply };
      });
    },
  };
}

export type WidgetService = ReturnType<typeof createWidgetService>;

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problemType } from '../../http/errors.js';
import { openEventStream } from '../../http/event-stream.js';
import type { EventStreams } from '../events/streams.js';
import { Lead } from '../leads/schema.js';
import { ListMessagesQuery, Message, MessageList } from '../messages/schema.js';
import type { MessageView } from '../messages/schema.js';
import type { ReplyStream, ReplyWorker } from './reply-worker.js';
import { ChatbotParams, ConversationMessageParams, ConversationParams, FeedbackBody, HandoffBody, HandoffResult, MessageEventStream, MessageExchange, StartConversationBody, StartedConversation, VISITOR_MESSAGE_BODY_LIMIT_BYTES, VisitorLeadBody, VisitorMessageBody, WidgetConfig } from './schema.js';
import { websiteOf, widgetRequestContext } from './widget-access.js';
import { widgetOperation } from './widget-operation.js';
import { ConversationEventStream, streamConversation } from './widget-stream.js';
import type { VisitorSession, WidgetService } from './widget-service.js';

function session(request: FastifyRequest): VisitorSession {
  if (!request.visitor) throw new Error('widget route without a visitor session');
  return request.visitor;
}

function wantsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/event-stream');
}

/**
 * Answers a visitor message as server-sent events: the stored message, the answer's pieces as they are
 * generated, then the stored answer. The message and its reply job are committed before the first byte,
 * so if the stream (or the process) dies, the worker still answers it.
 */
async function streamExchange(reply: FastifyReply, message: MessageView, answer: (stream: ReplyStream) => Promise<Awaited<ReturnType<ReplyWorker['answerNow']>>>): Promise<void> {
  const stream = openEventStream(reply);
  stream.send('message', message);
  try {
    // `reset`: the pieces sent so far are withdrawn (the provider failed mid-answer); the fallback follows.
    const outcome = await answer({ onDelta: (text) => stream.send('delta', { text }), onReset: () => stream.send('reset', {}) });
    if (outcome?.status === 'answered') stream.send('reply', outcome.reply);
    else if (outcome?.status === 'failed') stream.send('error', { type: problemType('service_unavailable'), title: 'Answer delayed', status: 503, code: 'service_unavailable', detail: outcome.error, request_id: reply.request.id });
  } catch (error) {
    reply.request.log.error({ err: error }, 'widget answer failed');
    stream.send('error', { type: problemType('internal_error'), title: 'Internal server error', status: 500, code: 'internal_error', detail: 'The answer could not be produced now; it will appear in the conversation.', request_id: reply.request.id });
  }
  stream.end();
}

/** The public chat endpoints under /widget/v1: the agent's look, start a conversation, send and list messages, leave contact details, rate an answer, ask for a person. */
export function widgetRoutes(widget: WidgetService, worker: ReplyWorker, streams: EventStreams): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const [url, resource] of [
      ['/chatbots/:chatbot_id', 'chatbot'],
      ['/chatbots/:chatbot_id/conversations', 'chatbot'],
      ['/conversations/:conversation_id/messages', 'conversation'],
      ['/conversations/:conversation_id/lead', 'conversation'],
      ['/conversations/:conversation_id/messages/:message_id/feedback', 'conversation'],
      ['/conversations/:conversation_id/handoff', 'conversation'],
      ['/conversations/:conversation_id/events', 'conversation'],
    ] as const) {
      // CORS preflights: answered by the access hook (204), never reach a handler.
      app.options(url, { schema: { hide: true }, config: { widget: { resource, preflight: true } } }, async () => undefined);
    }

    app.get(
      '/chatbots/:chatbot_id',
      widgetOperation({
        operationId: 'widgetGetConfig',
        summary: 'Get the widget\'s look',
        description:
          'What the widget shows before a conversation starts: the agent\'s `appearance`, title, welcome message, suggested questions and language. ' +
          'The widget reads it at every page load (`Cache-Control: no-cache`), so a change made through the API shows at the next load without touching the site.',
        access: { resource: 'chatbot' },
        params: ChatbotParams,
        success: { status: 200, description: 'The agent as the widget presents it.', schema: WidgetConfig },
        errors: [403, 404],
      }),
      async (request, reply) => reply.header('Cache-Control', 'no-cache').send(await widget.config(request.params.chatbot_id)),
    );

    app.post(
      '/chatbots/:chatbot_id/conversations',
      {
        ...widgetOperation({
          operationId: 'widgetStartConversation',
          summary: 'Start a conversation with an AI Agent',
          description: 'Starts a conversation (channel `widget`) with an active AI Agent and returns the visitor token that opens it, the welcome message and what the widget needs to show (lead capture).',
          access: { resource: 'chatbot' },
          params: ChatbotParams,
          body: StartConversationBody,
          success: { status: 201, description: 'The new conversation and its visitor token.', schema: StartedConversation },
          errors: [400, 403, 404, 409, 413, 415],
        }),
        // The body is optional: none at all means no visitor details.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
      },
      async (request, reply) => {
        const started = await widget.start(widgetRequestContext(request), request.params.chatbot_id, request.body, websiteOf(request));
        return reply.code(201).send(started);
      },
    );

    app.post(
      '/conversations/:conversation_id/messages',
      widgetOperation({
        operationId: 'widgetSendMessage',
        summary: 'Send a visitor message',
        description:
          'Stores the visitor\'s message and answers it. JSON: 201 with the stored message and the stored answer. With `Accept: text/event-stream`: ' +
          '200 and server-sent events as the answer is generated. In human mode (an operator took over) there is no answer. ' +
          'Once the AI Agent is paused or archived, its conversations take no new messages (409 `chatbot_not_active`).',
        access: { resource: 'conversation', messageBudget: true },
        params: ConversationParams,
        body: VisitorMessageBody,
        bodyLimit: VISITOR_MESSAGE_BODY_LIMIT_BYTES,
        success: { status: 201, description: 'The stored message and answer.', schema: MessageExchange },
        alternatives: { 200: { description: 'The exchange as server-sent events (with `Accept: text/event-stream`).', mediaType: 'text/event-stream', schema: MessageEventStream } },
        errors: [400, 401, 403, 404, 409, 413, 415],
      }),
      async (request, reply) => {
        const visitor = session(request);
        const message = await widget.send(visitor, widgetRequestContext(request), request.body.content);
        const answer = (stream?: ReplyStream) => worker.answerNow(visitor.workspaceId, message.id, stream);
        if (wantsEventStream(request)) return streamExchange(reply, message, answer);
        const outcome = await answer();
        return reply.code(201).send({ message, reply: outcome?.status === 'answered' ? outcome.reply : null });
      },
    );

    app.get(
      '/conversations/:conversation_id/messages',
      widgetOperation({
        operationId: 'widgetListMessages',
        summary: 'List the conversation\'s messages',
        description: 'The conversation\'s messages (visitor, agent and operator), oldest first, with cursor pagination; use `created_after` to fetch only new ones.',
        access: { resource: 'conversation' },
        params: ConversationParams,
        querystring: ListMessagesQuery,
        success: { status: 200, description: 'A page of messages.', schema: MessageList },
        errors: [400, 401, 403, 404],
      }),
      async (request, reply) => reply.links(await widget.list(session(request), widgetRequestContext(request), request.query)),
    );

    app.get(
      '/conversations/:conversation_id/events',
      widgetOperation({
        operationId: 'widgetStreamEvents',
        summary: 'Follow the conversation live',
        description:
          'Server-sent events of the conversation as they happen: new messages (an operator\'s reply appears without the visitor sending anything) ' +
          'and status changes. Send the last event\'s `id` as `Last-Event-ID` when reconnecting to receive exactly what was missed. ' +
          'A client address (IPv6: its /64) holds at most STREAMS_PER_IP streams at once and a conversation STREAMS_PER_CONVERSATION ' +
          '(per instance); beyond, 429 `too_many_streams` with Retry-After.',
        access: { resource: 'conversation' },
        params: ConversationParams,
        success: { status: 200, description: 'The conversation\'s events, as server-sent events.', schema: ConversationEventStream, mediaType: 'text/event-stream' },
        errors: [401, 403, 404],
      }),
      async (request, reply) => streamConversation(request, reply, streams, session(request)),
    );

    app.post(
      '/conversations/:conversation_id/lead',
      widgetOperation({
        operationId: 'widgetSubmitLead',
        summary: 'Leave contact details',
        description: 'Captures the visitor\'s contact details as the conversation\'s lead (source `widget`); an email or a phone is needed. A second submission updates the same lead. 409 `chatbot_not_active` once the AI Agent is paused or archived.',
        access: { resource: 'conversation' },
        params: ConversationParams,
        body: VisitorLeadBody,
        success: { status: 201, description: 'The conversation\'s lead.', schema: Lead },
        errors: [400, 401, 403, 404, 409, 413, 415],
      }),
      async (request, reply) => reply.code(201).send(await widget.submitLead(session(request), widgetRequestContext(request), request.body)),
    );

    app.post(
      '/conversations/:conversation_id/messages/:message_id/feedback',
      widgetOperation({
        operationId: 'widgetRateAnswer',
        summary: 'Rate an answer',
        description: 'Rates one of the AI Agent\'s answers in this conversation, thumbs up or down with an optional comment; a later rating replaces the earlier one. 404 for any other message (a visitor\'s own, or another conversation\'s).',
        access: { resource: 'conversation' },
        params: ConversationMessageParams,
        body: FeedbackBody,
        success: { status: 200, description: 'The rated answer, with its `feedback`.', schema: Message },
        errors: [400, 401, 403, 404, 413, 415],
      }),
      async (request) => widget.rate(session(request), widgetRequestContext(request), request.params.message_id, request.body),
    );

    app.post(
      '/conversations/:conversation_id/handoff',
      {
        ...widgetOperation({
          operationId: 'widgetRequestHandoff',
          summary: 'Ask for a person',
          description:
            'Marks the conversation as waiting for a person (`handoff_requested_at`) and stores the AI Agent\'s answer saying someone will follow up ' +
            '(asking for contact details when lead capture is on and none are known). Idempotent: a second request returns the first time and `reply: null`. ' +
            'When an operator already answers (human mode) there is no reply. The body is optional.',
          access: { resource: 'conversation' },
          params: ConversationParams,
          body: HandoffBody,
          success: { status: 200, description: 'When the person was first asked for, and the agent\'s answer.', schema: HandoffResult },
          errors: [400, 401, 403, 404, 409, 413, 415],
        }),
        // The body is optional: none at all is the same as `{}`.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
      },
      async (request) => widget.handoff(session(request), widgetRequestContext(request)),
    );
  };
}


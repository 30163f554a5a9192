import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { AnalyticsQuery, AnalyticsSummary, UnansweredQuery, UnansweredQuestionList } from './schema.js';
import type { AnalyticsService } from './service.js';

/** /analytics: the workspace summary, and the questions the agents could not answer. */
export function analyticsRoutes(analytics: AnalyticsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/analytics',
      operation({
        method: 'GET',
        url: '/analytics',
        operationId: 'getAnalytics',
        summary: 'Read the workspace analytics summary',
        description:
          'Totals for a period (conversations by status, messages by role, leads and conversion rate, agents by status, ' +
          'average messages per conversation) and a daily series. The period is whole UTC days: default the last 30 days (today included); at most 366 days. ' +
          'Computed from daily counters maintained with every write, so it is fast on large data.',
        tag: 'Analytics',
        scope: 'analytics:read',
        querystring: AnalyticsQuery,
        success: { status: 200, description: 'The analytics summary.', schema: AnalyticsSummary },
      }),
      async (request) => analytics.summary(apiContext(request), request.query),
    );

    app.get(
      '/analytics/unanswered',
      operation({
        method: 'GET',
        url: '/analytics/unanswered',
        operationId: 'listUnansweredQuestions',
        summary: 'List the questions the AI Agents could not answer',
        description:
          'The visitor questions an agent could not answer from its knowledge in a period (whole UTC days, as GET /analytics: default the last 30 days), ' +
          'grouped by their normalized text (lowercased, accents folded, punctuation stripped) with how often each was asked, the group asked most recently first. ' +
          'Filter by `chatbot_id`; `limit` groups (default 50, at most 100).',
        tag: 'Analytics',
        scope: 'analytics:read',
        querystring: UnansweredQuery,
        success: { status: 200, description: 'The grouped questions.', schema: UnansweredQuestionList },
        errors: { 404: 'The workspace has no AI Agent with this `chatbot_id`.' },
      }),
      async (request) => analytics.unanswered(apiContext(request), request.query),
    );
  };
}

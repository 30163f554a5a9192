import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { AnalyticsQuery, AnalyticsSummary } from './schema.js';
import type { AnalyticsService } from './service.js';

/** /analytics: the workspace summary. */
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
  };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams } from '../../http/schemas.js';
import { AnalyticsQuery, UnansweredQuery, UnansweredQuestionList } from '../../modules/analytics/schema.js';
import type { Services } from '../../services.js';
import { ChangeRoleBody, CreateApiKeyBody, CreateInvitationBody, UserParams } from '../schemas.js';
import { dashboardContext } from '../session.js';

/** Analytics (+ the unanswered questions), Settings → Developers (API keys, admins and owners only) and Settings → Members. */
export function settingsRoutes(services: Services): FastifyPluginAsyncTypebox {
  const { analytics, apiKeys, users, invitations } = services;
  const admin = { minRole: 'admin' as const };
  return async (app) => {
    app.get('/analytics', { schema: { querystring: AnalyticsQuery } }, async (request) => analytics.summary(dashboardContext(request), request.query));
    app.get('/analytics/unanswered', { schema: { querystring: UnansweredQuery, response: { 200: UnansweredQuestionList } } }, async (request) =>
      analytics.unanswered(dashboardContext(request), request.query),
    );

    // Keys made in the dashboard name their creator by user id: shown as the member's email.
    app.get('/api-keys', { config: admin }, async (request) => {
      const ctx = dashboardContext(request);
      const [keys, members] = await Promise.all([apiKeys.list(ctx), users.members(ctx)]);
      const emails = new Map(members.map((m) => [`user:${m.user_id}`, m.email]));
      return { object: 'list', data: keys.map((key) => ({ ...key, created_by_name: key.created_by ? (emails.get(key.created_by) ?? key.created_by.replace(/^[a-z_]+:/, '')) : null })) };
    });

    // The same service as the CLI: the secret is returned this once.
    app.post('/api-keys', { schema: { body: CreateApiKeyBody }, config: admin }, async (request, reply) => {
      const { key, secret } = await apiKeys.create(dashboardContext(request), {
        name: request.body.name,
        scopes: request.body.scopes,
        expiresInDays: request.body.expires_in_days ?? null,
      });
      return reply.code(201).send({ ...key, secret });
    });

    app.post('/api-keys/:id/revoke', { schema: { params: IdParams }, config: admin }, async (request) => apiKeys.revoke(dashboardContext(request), request.params.id));

    app.get('/members', { config: admin }, async (request) => {
      const ctx = dashboardContext(request);
      const [members, open] = await Promise.all([users.members(ctx), invitations.listOpen(ctx)]);
      return { object: 'list', data: members, invitations: open };
    });

    // The token goes in the link's fragment, which browsers never send: it cannot end up in access logs.
    app.post('/invitations', { schema: { body: CreateInvitationBody }, config: admin }, async (request, reply) => {
      const { invitation, token } = await invitations.create(dashboardContext(request), request.session!.role, { ...request.body, ttlDays: app.config.invitationTtlDays });
      return reply.code(201).send({ ...invitation, token, url: `${app.config.publicUrl}/invite#${token}` });
    });

    app.delete('/invitations/:id', { schema: { params: IdParams }, config: admin }, async (request, reply) => {
      await invitations.revoke(dashboardContext(request), request.session!.role, request.params.id);
      return reply.code(204).send();
    });

    app.patch('/members/:user_id', { schema: { params: UserParams, body: ChangeRoleBody }, config: admin }, async (request) =>
      users.changeRole(dashboardContext(request), request.session!.role, request.params.user_id, request.body.role),
    );

    app.delete('/members/:user_id', { schema: { params: UserParams }, config: admin }, async (request, reply) => {
      await users.removeMember(dashboardContext(request), request.session!.role, request.params.user_id);
      return reply.code(204).send();
    });
  };
}

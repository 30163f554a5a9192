import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SMALL_BODY_LIMIT_BYTES } from '../../http/json-body.js';
import type { MailPreferenceService } from '../../modules/mail/preferences.js';
import { dashboardContext } from '../session.js';

/** PATCH /app/api/account/notifications: either preference, or both. */
export const NotificationPreferencesBody = Type.Object(
  { notify_new_lead: Type.Optional(Type.Boolean()), notify_handoff: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** What the signed-in member is emailed about in the current workspace (Settings → Account). */
export function notificationRoutes(preferences: MailPreferenceService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/account/notifications', async (request) => preferences.get(dashboardContext(request)));
    app.patch('/account/notifications', { schema: { body: NotificationPreferencesBody }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request) =>
      preferences.update(dashboardContext(request), request.body),
    );
  };
}

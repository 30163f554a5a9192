import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ActiveProvider, ConnectionTest, ProviderModels, ProviderSettings, SaveProviderSettingsBody, TestProviderBody } from '../../modules/provider-settings/schema.js';
import type { ProviderSettingsService } from '../../modules/provider-settings/service.js';
import { dashboardContext } from '../session.js';

/**
 * Settings → Model provider. The settings themselves are the instance owner's (the service answers 403 to
 * anyone else); the provider in effect and its models are for every member (the agent page).
 */
export function providerRoutes(providerSettings: ProviderSettingsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/provider', { schema: { response: { 200: ActiveProvider } } }, async () => providerSettings.active());

    app.get('/provider/models', { schema: { response: { 200: ProviderModels } } }, async () => providerSettings.models());

    app.get('/provider/settings', { schema: { response: { 200: ProviderSettings } } }, async (request) => providerSettings.get(dashboardContext(request)));

    app.put('/provider/settings', { schema: { body: SaveProviderSettingsBody, response: { 200: ProviderSettings } } }, async (request) =>
      providerSettings.save(dashboardContext(request), request.body),
    );

    app.post('/provider/test', { schema: { body: TestProviderBody, response: { 200: ConnectionTest } } }, async (request) =>
      providerSettings.test(dashboardContext(request), request.body),
    );
  };
}

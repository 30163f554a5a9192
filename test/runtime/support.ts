import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Tenant } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';

/** A random client address, so budgets keyed by IP never collide between tests (or runs sharing Redis). */
export function randomIp(): string {
  return `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
}

/** A published (active) agent with the given fields. */
export async function makeActiveChatbot(tenant: Tenant, overrides: Record<string, unknown> = {}) {
  const bot = await makeChatbot(tenant, overrides);
  const response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
  if (response.statusCode !== 200) throw new Error(`publish: ${response.statusCode} ${response.body}`);
  return response.json() as { id: string; name: string };
}

/** Sends a widget request through inject (JSON body, optional visitor token, origin and client IP). */
export function widget(
  app: FastifyInstance,
  method: string,
  url: string,
  options: { body?: unknown; token?: string; origin?: string; ip?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: method as 'GET',
    url,
    remoteAddress: options.ip ?? randomIp(),
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.origin ? { origin: options.origin } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
  });
}

/** Starts a widget conversation with an agent and returns the 201 body. */
export async function startConversation(app: FastifyInstance, chatbotId: string, body?: unknown) {
  const response = await widget(app, 'POST', `/widget/v1/chatbots/${chatbotId}/conversations`, body === undefined ? {} : { body });
  if (response.statusCode !== 201) throw new Error(`start: ${response.statusCode} ${response.body}`);
  return response.json() as { conversation_id: string; visitor_token: string; welcome_message: string | null; chatbot: { id: string; lead_capture: { enabled: boolean } } };
}

/** Parses a server-sent event stream into its events. */
export function parseEvents(body: string): Array<{ event: string; data: unknown }> {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null';
      return { event, data: JSON.parse(data) as unknown };
    });
}

/** Polls until `check` returns a value (not undefined), for at most `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

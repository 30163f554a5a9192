import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Scope } from '../../src/http/scopes.js';

/** Shared helpers of the /api/v1 suites (not a test file itself). */

export const PREFIX = {
  chatbot: /^bot_[0-9A-HJKMNP-TV-Z]{26}$/,
  conversation: /^conv_[0-9A-HJKMNP-TV-Z]{26}$/,
  message: /^msg_[0-9A-HJKMNP-TV-Z]{26}$/,
  lead: /^lead_[0-9A-HJKMNP-TV-Z]{26}$/,
  visitor: /^vis_[0-9A-HJKMNP-TV-Z]{26}$/,
  apiKey: /^key_[0-9A-HJKMNP-TV-Z]{26}$/,
  workspace: /^ws_[0-9A-HJKMNP-TV-Z]{26}$/,
} as const;

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export { expectProblem, send } from '../helpers/http.js';
export { testClock, type TestClock } from '../helpers/clock.js';

/** Asserts that every key of the object (and of nested objects, except free maps) is snake_case. */
export function expectSnakeCase(value: unknown, path = ''): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => expectSnakeCase(item, `${path}[${i}]`));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    expect(key, `${path}.${key}`).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    if (key === 'metadata' || key === 'custom_fields') continue;
    expectSnakeCase(inner, `${path}.${key}`);
  }
}

/** The ids an operation of the table below needs. */
export interface Fixtures {
  chatbotId: string;
  conversationId: string;
  leadId: string;
}

/** One of the 13 operations of /api/v1, with a valid request for it. */
export interface OperationCase {
  name: string;
  method: 'GET' | 'POST' | 'PATCH';
  scope: Scope;
  success: 200 | 201;
  url(f: Fixtures): string;
  body?: (f: Fixtures) => unknown;
}

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

/** The 13 operations of the specification, with the scope it names for each. */
export const OPERATIONS: readonly OperationCase[] = [
  { name: 'GET /analytics', method: 'GET', scope: 'analytics:read', success: 200, url: () => '/api/v1/analytics' },
  { name: 'GET /chatbots', method: 'GET', scope: 'chatbots:read', success: 200, url: () => '/api/v1/chatbots' },
  { name: 'POST /chatbots', method: 'POST', scope: 'chatbots:write', success: 201, url: () => '/api/v1/chatbots', body: () => ({ name: 'Agent' }) },
  { name: 'GET /chatbots/{id}', method: 'GET', scope: 'chatbots:read', success: 200, url: (f) => `/api/v1/chatbots/${f.chatbotId}` },
  {
    name: 'PATCH /chatbots/{id}',
    method: 'PATCH',
    scope: 'chatbots:write',
    success: 200,
    url: (f) => `/api/v1/chatbots/${f.chatbotId}`,
    body: () => ({ description: `changed ${unique()}` }),
  },
  { name: 'GET /conversations', method: 'GET', scope: 'conversations:read', success: 200, url: () => '/api/v1/conversations' },
  { name: 'GET /conversations/{id}', method: 'GET', scope: 'conversations:read', success: 200, url: (f) => `/api/v1/conversations/${f.conversationId}` },
  {
    name: 'GET /conversations/{id}/messages',
    method: 'GET',
    scope: 'conversations:read',
    success: 200,
    url: (f) => `/api/v1/conversations/${f.conversationId}/messages`,
  },
  {
    name: 'POST /conversations/{id}/messages',
    method: 'POST',
    scope: 'messages:write',
    success: 201,
    url: (f) => `/api/v1/conversations/${f.conversationId}/messages`,
    body: () => ({ content: 'Hello there' }),
  },
  { name: 'GET /leads', method: 'GET', scope: 'leads:read', success: 200, url: () => '/api/v1/leads' },
  { name: 'POST /leads', method: 'POST', scope: 'leads:write', success: 201, url: () => '/api/v1/leads', body: () => ({ email: `lead-${unique()}@example.com` }) },
  { name: 'GET /leads/{id}', method: 'GET', scope: 'leads:read', success: 200, url: (f) => `/api/v1/leads/${f.leadId}` },
  {
    name: 'PATCH /leads/{id}',
    method: 'PATCH',
    scope: 'leads:write',
    success: 200,
    url: (f) => `/api/v1/leads/${f.leadId}`,
    body: () => ({ company: `Company ${unique()}` }),
  },
];

/** Checks a setup request did what the test relies on, and returns its JSON body. */
export async function must<T = Record<string, unknown>>(response: Promise<LightMyRequestResponse> | LightMyRequestResponse, status: number): Promise<T> {
  const r = await response;
  if (r.statusCode !== status) throw new Error(`setup request failed: expected ${status}, got ${r.statusCode} ${r.body}`);
  return r.json() as T;
}

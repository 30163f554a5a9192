import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** Sends a request through `inject` with an explicit key (or none when `key` is null); JSON bodies. */
export function send(
  app: FastifyInstance,
  key: string | null,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: method as 'GET',
    url,
    headers: {
      ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}

/** The parts of a response a problem check looks at (an inject response or a fetch result). */
export interface ResponseLike {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** An RFC 9457 problem as the API sends it. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: { pointer?: string; parameter?: string; message: string }[];
  [member: string]: unknown;
}

/** A stable error code: lower snake_case. */
export const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/**
 * Why an error response is not a well-formed problem, or null when it is: problem+json, the HTTP status in
 * the body, a snake_case code, the standard members, and a request_id equal to the Request-Id header.
 */
function malformedProblem(res: ResponseLike): string | null {
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json')) return `content-type is "${type}"`;
  let body: ProblemBody;
  try {
    body = JSON.parse(res.body) as ProblemBody;
  } catch {
    return 'body is not JSON';
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'body is not an object';
  if (body.status !== res.statusCode) return `body status ${String(body.status)} differs from HTTP ${res.statusCode}`;
  if (typeof body.code !== 'string' || !SNAKE_CASE.test(body.code)) return `code ${JSON.stringify(body.code)} is not snake_case`;
  for (const member of ['type', 'title', 'detail'] as const) {
    if (typeof body[member] !== 'string' || body[member] === '') return `member "${member}" is missing`;
  }
  if (typeof body.request_id !== 'string' || body.request_id === '') return 'request_id is missing';
  if (res.headers['request-id'] !== body.request_id) return 'request_id differs from the Request-Id header';
  return null;
}

/** Why a response is not a well-formed 4xx problem (see `malformedProblem`), or null when it is. */
export function problemDefect(res: ResponseLike): string | null {
  if (res.statusCode < 400 || res.statusCode > 499) return `status ${res.statusCode} is not a 4xx`;
  return malformedProblem(res);
}

/**
 * Asserts an RFC 9457 problem (application/problem+json, well formed as `malformedProblem` says) with this
 * status and, when given, this code or one of these codes; returns its body.
 */
export function expectProblem(res: ResponseLike, status: number, code?: string | string[]): ProblemBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type'], res.body).toMatch(/^application\/problem\+json/);
  expect(malformedProblem(res), res.body).toBeNull();
  const body = JSON.parse(res.body) as ProblemBody;
  if (code !== undefined) expect([code].flat(), res.body).toContain(body.code);
  return body;
}

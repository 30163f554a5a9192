import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isCancelledStatementError, isStorageFullError, isUnavailableError } from '../db/dialect.js';
import { AppError, problemType } from './errors.js';
import { toFieldErrors, validationDetail } from './validation.js';

/** Sends an AppError as RFC 9457 problem details. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const query = request.url.indexOf('?');
  const body = {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.message,
    instance: query < 0 ? request.url : request.url.slice(0, query),
    code: error.code,
    request_id: request.id,
    ...error.extensions,
  };
  reply.header('Request-Id', request.id);
  for (const name in error.headers) reply.header(name, error.headers[name]!);
  return reply
    .code(error.status)
    .type('application/problem+json')
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(body);
}

const FASTIFY_CODES: Record<string, (error: FastifyError) => AppError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError('unsupported_media_type', 'Request bodies must be JSON: send Content-Type: application/json.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError('invalid_request', 'The Content-Length header does not match the body.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large', 'The request body is larger than this operation accepts.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new AppError('invalid_request', 'The body is empty but Content-Type says JSON: send a JSON object.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError('invalid_request', 'The body is not valid JSON.'),
};

/** Maps any error to a problem: AppErrors as they are, validation and parser errors to 4xx, the rest to 500. */
export function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;
  if (error.validation) {
    const context = error.validationContext;
    const where = context === 'querystring' ? 'query string' : context === 'params' ? 'path' : (context ?? 'body');
    return AppError.validation(validationDetail(error.validation as never, `The request ${where} is invalid.`), toFieldErrors(error.validation as never, context));
  }
  const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (mapped) return mapped(error);
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('invalid_request', 'The body is not valid JSON.');
  }
  if (isUnavailableError(error)) {
    return new AppError('service_unavailable', 'The database is unreachable right now; retry shortly.', {}, { 'Retry-After': '5' });
  }
  // Both roll the write back whole: nothing was kept, and the same request may be sent again.
  if (isCancelledStatementError(error)) {
    return new AppError('service_unavailable', 'The database was too busy to finish this request in time; nothing was written. Retry shortly.', {}, { 'Retry-After': '1' });
  }
  if (isStorageFullError(error)) {
    return new AppError('storage_full', 'The database has no room left for writes; nothing was written. Retry once space is freed.', {}, { 'Retry-After': '30' });
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return new AppError('payload_too_large', 'The request body is too large.');
  if (status === 415) return new AppError('unsupported_media_type', 'Unsupported Content-Type.');
  if (status >= 400 && status < 500) return new AppError('invalid_request', error.message);
  return new AppError('internal_error', 'Something went wrong on our side. Quote the request id when reporting it.');
}

/** Fastify `frameworkErrors`: errors raised before routing (bad URL encoding, over-long path parameters) as problems. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem =
    error.code === 'FST_ERR_BAD_URL'
      ? new AppError('invalid_request', 'The URL is malformed (invalid percent-encoding).')
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH' || error.statusCode === 414
        ? new AppError('not_found', 'No such resource in this workspace.')
        : toAppError(error);
  return sendProblem(request, reply, problem);
}

/** Installs the one error handler and the 404 handler of the service. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toAppError(error);
    if (problem.status < 500) {
      request.log.debug({ code: problem.code, status: problem.status }, 'request refused');
      return sendProblem(request, reply, problem);
    }
    if (problem.status === 503) request.log.warn({ err: error }, 'dependency unavailable');
    else request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, problem);
  });
  // No route for this method: 405 with Allow when the path has routes for other methods (RFC 9110 §15.5.6),
  // before any authentication: it reveals only the route table, which the OpenAPI documents publish.
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = ROUTABLE_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    // A route of this very method that found nothing (reply.callNotFound) is a plain 404.
    if (allowed.length > 0 && !allowed.includes(request.method as (typeof ROUTABLE_METHODS)[number])) {
      const problem = new AppError('method_not_allowed', `${request.method} is not supported on ${path}; it supports ${allowed.join(', ')}.`, {}, { Allow: allowed.join(', ') });
      return sendProblem(request, reply, problem);
    }
    return sendProblem(request, reply, new AppError('not_found', `No route for ${request.method} ${path}.`));
  });
}

/** The methods a 405's Allow header can name. */
const ROUTABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

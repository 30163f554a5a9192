import type { onResponseHookHandler } from 'fastify';

/**
 * The request's one log line, written when it completes (Fastify's own request logging is disabled in
 * src/app.ts): through the request's logger, so it carries `request_id`, at `info`.
 */
export const logCompletedRequest: onResponseHookHandler = (request, reply, done) => {
  request.log.info(
    { method: request.method, url: request.url, status: reply.statusCode, response_time_ms: Math.round(reply.elapsedTime * 10) / 10 },
    'request completed',
  );
  done();
};

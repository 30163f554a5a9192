import type { FastifyReply, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import { jsonString } from '../lib/json.js';

interface LineStream {
  write(line: string): unknown;
}

/**
 * The request's one log line ("request completed"), the same JSON line pino would write for
 * `log.child({ request_id }).info({ method, url, status, response_time_ms }, 'request completed')`, to
 * the logger's own destination, at the logger's `info` level. It is built from one template instead of
 * pino's generic walk over the logged object: the line is a fixed shape written on every request, and in
 * the service under load pino's general path cost about three times the template's (docs/decisions/0005).
 * The strings that come from the client (the request id, the URL) are JSON-escaped; the method is an HTTP
 * token, which needs no escaping.
 */
export function accessLogger(logger: Logger): (request: FastifyRequest, reply: FastifyReply) => void {
  const symbols = pino.symbols;
  const stream = (logger as unknown as Record<symbol, LineStream>)[symbols.streamSym]!;
  // The logger's own timestamp (`,"time":"…"`), its base bindings as it serialized them (`,"service":"…"`)
  // and its number for the info level.
  const time = (logger as unknown as Record<symbol, () => string>)[symbols.timeSym]!;
  const bindings = (logger as unknown as Record<symbol, string>)[symbols.chindingsSym] ?? '';
  const levelInfo = logger.levels.values.info!;
  return function logRequest(request, reply) {
    if (!logger.isLevelEnabled('info')) return;
    const milliseconds = Math.round(reply.elapsedTime * 10) / 10;
    stream.write(
      `{"level":${levelInfo}${time()}${bindings},"request_id":${jsonString(request.id)},` +
        `"method":"${request.method}","url":${jsonString(request.url)},"status":${reply.statusCode},` +
        `"response_time_ms":${milliseconds},"msg":"request completed"}\n`,
    );
  };
}

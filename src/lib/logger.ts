import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * Paths that must never reach a log line: credentials and secrets. Explicit paths only: a wildcard makes
 * pino walk every logged object, which costs more than the rest of the request's log line.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'cookie',
  'secret',
  'password',
  'body.secret',
  'body.password',
  'apiKey',
  'llm.openai.apiKey',
  'llm.anthropic.apiKey',
];

/** The service's pino logger: JSON lines with request ids; credentials redacted. */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'chat-agent-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

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
  'audit.signingKey',
];

/** Where log lines go: pino calls `write` with one complete JSON line at a time (tests pass collectors). */
export interface LogDestination {
  write(line: string): void;
}

let stdout: LogDestination | undefined;

/** A line waits in the buffer at most this long before it is written (pino flushes it on a timer). */
const FLUSH_INTERVAL_MS = 250;

/**
 * stdout through pino's asynchronous destination, one for the whole process: lines are buffered and
 * written 4 kB at a time, or after at most FLUSH_INTERVAL_MS when the server is quiet. For `sync: false`
 * pino registers its own synchronous flush on process 'exit' (no handler of ours is needed), which the
 * graceful shutdown, `process.exit` and an uncaught exception all pass through; a `kill -9`, a signal with
 * no handler (which ends Node without 'exit') or a power cut loses the lines still buffered: under 4 kB,
 * at most the last quarter second's.
 */
function stdoutDestination(): LogDestination {
  return (stdout ??= pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: FLUSH_INTERVAL_MS }));
}

/** The service's pino logger: JSON lines with ISO timestamps, credentials redacted, to stdout by default. */
export function createLogger(config: Pick<Config, 'logLevel'>, destination: LogDestination = stdoutDestination()): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: { service: 'chat-agent-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

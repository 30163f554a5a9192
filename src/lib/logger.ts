import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';
import { syncLineDestination, turnBufferedDestination, type LineDestination } from './log-destination.js';

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

let lastSecond = -1;
let secondPrefix = '';

/**
 * pino's `isoTime` (`,"time":"2026-11-24T22:05:42.123Z"`), with the date formatted once per second and the
 * milliseconds appended: `Date#toISOString` costs about as much as the rest of the access line.
 */
export function isoTimeField(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    // "2026-11-24T22:05:42." (20 characters) of the second's ISO form.
    secondPrefix = `,"time":"${new Date(second * 1000).toISOString().slice(0, 20)}`;
  }
  const ms = now - second * 1000;
  return `${secondPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

let stdout: LineDestination | undefined;

/** The process's stdout as a log destination: one for every logger, so the lines of a turn share a write. */
function stdoutDestination(): LineDestination {
  return (stdout ??= turnBufferedDestination(syncLineDestination()));
}

/**
 * The service's pino logger: JSON lines with request ids; credentials redacted. Lines go to stdout with
 * one synchronous write per event-loop turn (`turnBufferedDestination` over `syncLineDestination`): none
 * outlives the turn that logged it, and none costs a trip through libuv's thread pool, pino's default,
 * which under load cost about 5 µs per line (docs/decisions/0005).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination: LineDestination = stdoutDestination()): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: { service: 'chat-agent-service' },
      timestamp: isoTimeField,
    },
    destination,
  );
}

type LevelMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Bindings = Record<string, unknown>;
type ChildOptions = { level?: string } & Record<string, unknown>;
interface BaseLogger {
  level: string;
  isLevelEnabled(level: string): boolean;
  child(bindings: Bindings, options?: ChildOptions): BaseLogger;
}

/**
 * A request's logger (Fastify `childLoggerFactory`): the pino child with the request's bindings
 * (`request_id`) is made when the request first logs a line at an enabled level, not for every request.
 * Most requests write only their access line (src/http/access-log.ts), which does not need it; making the
 * child anyway cost about 1 µs per request (docs/decisions/0005).
 */
export function deferredChildLogger<L extends BaseLogger>(parent: L, bindings: Bindings, options: ChildOptions): L {
  // A route with its own level needs the real child at once: its level, not the parent's, decides.
  if (options.level !== undefined) return parent.child(bindings, options) as L;
  return new DeferredChild(parent, bindings, options) as unknown as L;
}

class DeferredChild {
  private real: BaseLogger | null = null;
  constructor(
    private readonly parent: BaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private materialize(): BaseLogger {
    return (this.real ??= this.parent.child(this.bindings, this.options));
  }
  get level(): string {
    return (this.real ?? this.parent).level;
  }
  set level(level: string) {
    this.materialize().level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(level);
  }
  child(bindings: Bindings, options?: ChildOptions): BaseLogger {
    return this.materialize().child(bindings, options);
  }
  silent(): void {}
  private line(method: LevelMethod, args: unknown[]): void {
    if (this.real === null && !this.parent.isLevelEnabled(method)) return;
    (this.materialize() as unknown as Record<LevelMethod, (...a: unknown[]) => void>)[method](...args);
  }
  fatal(...args: unknown[]): void {
    this.line('fatal', args);
  }
  error(...args: unknown[]): void {
    this.line('error', args);
  }
  warn(...args: unknown[]): void {
    this.line('warn', args);
  }
  info(...args: unknown[]): void {
    this.line('info', args);
  }
  debug(...args: unknown[]): void {
    this.line('debug', args);
  }
  trace(...args: unknown[]): void {
    this.line('trace', args);
  }
}

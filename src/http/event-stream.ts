import type { FastifyReply } from 'fastify';

/** A stream whose client reads slower than this many bytes behind is dropped; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1 << 20;

export interface EventStream {
  /** Writes one event (`id` when the client should resume after it). */
  send(event: string, data: unknown, id?: number | string): void;
  /** Writes a comment line: keeps proxies from closing an idle connection. */
  keepAlive(): void;
  end(): void;
  /** Whether the client has gone (or was dropped). */
  readonly closed: boolean;
}

/**
 * Answers the request with `text/event-stream` (the headers the route's hooks set, CORS included, kept) and
 * returns a writer for it. `onClose` runs once, when the client goes or the stream ends.
 */
export function openEventStream(reply: FastifyReply, options: { retryMs?: number; onClose?: () => void } = {}): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  raw.on('close', close);
  // A client gone before the stream opened: its 'close' was emitted already, and onClose must still run.
  if (raw.destroyed) close();
  const write = (text: string) => {
    if (closed || raw.destroyed) return;
    raw.write(text);
    if (raw.writableLength > MAX_BUFFERED_BYTES) raw.destroy();
  };
  if (options.retryMs) write(`retry: ${options.retryMs}\n\n`);
  return {
    send(event, data, id) {
      write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    keepAlive() {
      write(': keep-alive\n\n');
    },
    end() {
      if (!raw.destroyed) raw.end();
      close();
    },
    get closed() {
      return closed || raw.destroyed;
    },
  };
}

/** The `Last-Event-ID` a reconnecting client sends, as an event number; undefined when absent or not one. */
export function lastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { loadConfig, type Config } from '../../src/config.js';

/** One request the receiver got. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers to one request: a status, headers, a body; or 'hang' to never answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A real HTTP server in the test that records what it receives. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves when `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1; `answer` decides each response from the request and its index (0-based). */
export async function startReceiver(answer: (request: Received, index: number) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      const reply = answer(entry, received.length);
      received.push(entry);
      for (const wake of waiters.splice(0)) wake();
      if (reply === 'hang') return;
      response.writeHead(reply.status, reply.headers ?? {});
      response.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} of ${count} requests`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return received.slice(0, count);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The payload of a request, verified with the standardwebhooks package under `secret` (throws when the signature does not match). */
export function verified(secret: string, request: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
}

/** Webhook settings for tests: receivers on 127.0.0.1 allowed, quick retries, a short timeout. */
export function webhookConfig(overrides: Partial<Config['webhooks']> = {}): Pick<Config, 'webhooks' | 'runtime'> {
  const base = loadConfig({});
  return {
    webhooks: { ...base.webhooks, allowPrivateHosts: true, retryScheduleSeconds: [0.05, 0.05, 0.05], timeoutMs: 2000, ...overrides },
    runtime: { ...base.runtime, pollIntervalMs: 50 },
  };
}

import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

// The visitors' side of the live-streams benchmark (bench/live-streams.ts), in its own process so that its
// sockets and parsers do not count in the server's memory. It says "ready" on stdout, then answers each
// command that arrives on stdin as one line of JSON with one line of JSON, until stdin closes:
// - `open`: opens one widget event stream per conversation, `concurrency` at a time, and answers once every
//   stream has said `ready` (or failed);
// - `collect`: waits until `expected` bench messages have arrived (or `timeoutMs` has passed) and answers with
//   each one's fan-out latency: its receipt here minus the send time stamped in its content by the server
//   process, both read as `performance.timeOrigin + performance.now()` (the same machine's clock).

/** One stream to open: the conversation and its visitor token. */
export interface ClientStream {
  id: string;
  token: string;
}

/** The commands the parent sends. */
export type ClientCommand =
  | { open: { url: string; streams: ClientStream[]; concurrency: number } }
  | { collect: { expected: number; timeoutMs: number } };

/** The answer to `open`. */
export interface OpenResult {
  opened: number;
  failed: number;
  firstError: string | null;
  seconds: number;
}

/** Keep-alives received less than a second apart. */
export interface KeepAliveBurst {
  count: number;
  first: number;
  last: number;
}

/** The answer to `collect`. Latencies in ms. */
export interface CollectResult {
  /** Distinct bench messages received. */
  delivered: number;
  /** Bench messages that arrived on a stream of another conversation. */
  misrouted: number;
  /** Bench messages received more than once on their stream. */
  duplicates: number;
  /** Streams that ended while the messages were being produced. */
  ended: number;
  /** [message number, from the write call, from its due time] of each message received. */
  latencies: [number, number, number][];
  /** The live heartbeat's keep-alive comments, in bursts (one per heartbeat): how many, first and last receipt (ms since the epoch). */
  keepAlives: KeepAliveBurst[];
  /** This process's longest event-loop delay since the streams were open, ms: how late a receipt can be read here. */
  loopDelayMaxMs: number;
}

/**
 * The content of a bench message: `live-bench <number> <due time> <send time>` (ms since the epoch): when the
 * producer's schedule wanted it written, and when the write call was made.
 */
const BENCH_MESSAGE = /^live-bench (\d+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/;
const now = () => performance.timeOrigin + performance.now();

const latencyOf = new Map<number, [number, number]>();
let misrouted = 0;
let duplicates = 0;
let ended = 0;
let onMessage: (() => void) | null = null;
const keepAlives: KeepAliveBurst[] = [];
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
const requests: http.ClientRequest[] = [];

/** Reads one SSE block (the lines between blank lines): a bench message is timed and checked. */
function readBlock(block: string, conversationId: string, ready: () => void): void {
  let event = 'message';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) {
      const at = now();
      const burst = keepAlives.at(-1);
      if (burst && at - burst.last < 1000) {
        burst.count++;
        burst.last = at;
      } else keepAlives.push({ count: 1, first: at, last: at });
    } else if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (event === 'ready') return ready();
  // The `retry:` block and keep-alive comments carry no data.
  if (event !== 'message' || data === '') return;
  const receivedAt = now();
  const message = JSON.parse(data) as { conversation_id: string; content: string };
  const match = BENCH_MESSAGE.exec(message.content);
  if (!match) return;
  if (message.conversation_id !== conversationId) misrouted++;
  const number = Number(match[1]);
  if (latencyOf.has(number)) duplicates++;
  else latencyOf.set(number, [receivedAt - Number(match[3]), receivedAt - Number(match[2])]);
  onMessage?.();
}

/** Opens one stream; resolves when it says `ready`, rejects when it is refused or ends first. */
function openStream(url: URL, stream: ClientStream): Promise<void> {
  return new Promise((resolve, reject) => {
    let live = false;
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `/widget/v1/conversations/${stream.id}/events`,
        headers: { authorization: `Bearer ${stream.token}`, accept: 'text/event-stream' },
        agent: false,
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`stream of ${stream.id}: ${response.statusCode}`));
          return;
        }
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            readBlock(block, stream.id, () => {
              live = true;
              resolve();
            });
          }
        });
        response.on('end', () => {
          if (live) ended++;
          else reject(new Error(`stream of ${stream.id} ended before ready`));
        });
      },
    );
    request.on('error', (error) => {
      if (live) ended++;
      else reject(error);
    });
    request.end();
    requests.push(request);
  });
}

async function open(command: { url: string; streams: ClientStream[]; concurrency: number }): Promise<OpenResult> {
  const began = performance.now();
  const url = new URL(command.url);
  let next = 0;
  let opened = 0;
  let failed = 0;
  let firstError: string | null = null;
  // `concurrency` connections are being set up at any time, so that the server's accept queue never overflows.
  const worker = async () => {
    while (next < command.streams.length) {
      const stream = command.streams[next++]!;
      try {
        await openStream(url, stream);
        opened++;
      } catch (error) {
        failed++;
        firstError ??= String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: command.concurrency }, worker));
  loopDelay.enable();
  return { opened, failed, firstError, seconds: (performance.now() - began) / 1000 };
}

async function collect(command: { expected: number; timeoutMs: number }): Promise<CollectResult> {
  if (latencyOf.size < command.expected) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, command.timeoutMs);
      onMessage = () => {
        if (latencyOf.size < command.expected) return;
        clearTimeout(timer);
        resolve();
      };
    });
    onMessage = null;
  }
  return { delivered: latencyOf.size, misrouted, duplicates, ended, latencies: [...latencyOf].map(([number, [sent, due]]) => [number, sent, due]), keepAlives, loopDelayMaxMs: loopDelay.max / 1e6 };
}

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const command = JSON.parse(line) as ClientCommand;
  const result = 'open' in command ? await open(command.open) : await collect(command.collect);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
for (const request of requests) request.destroy();

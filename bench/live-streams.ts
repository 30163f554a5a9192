import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { systemContext, type OperationContext } from '../src/lib/actor.js';
import { createBenchAgent } from './agent-chunks.js';
import { benchDatabaseEnv, dropBenchDatabase, settle, type Backend } from './databases.js';
import type { ClientCommand, ClientStream, CollectResult, OpenResult } from './live-streams-client.js';
import { percentile, syntheticText } from './text.js';

// Live widget streams on one instance (issue 32: ≤ 30 KB of server memory per idle stream, fan-out p99 ≤ 200 ms
// at 100 events per second). `npm run bench` runs it (`--only live`); on its own: `npx tsx bench/live-streams.ts
// [--db sqlite|postgres] [--streams 5000] [--seconds 10] [--rate 100]`. It builds the app with buildApp as a
// deployment runs it (widget rate limits and the streams per address raised; on PostgreSQL with Redis and LISTEN/NOTIFY) and serves it on
// 127.0.0.1 in this process; the visitors run in a child process (bench/live-streams-client.ts) so that their
// sockets do not count in the server's memory. One active agent, one conversation per stream (started through
// the widget endpoint, not timed). Memory: this process's heap (heapUsed + external) and RSS after a full GC,
// once every stream has said `ready`, minus the same before the first was opened, per stream. Fan-out: operator
// messages (`messages.send`, as the API's POST stores them) to conversations drawn at random among the streams,
// at `rate` per second for `seconds`, each stamped with the time just before the write; the client takes its
// receipt minus that stamp (one machine, one clock). Not part of `npm test`.

/** Live streams on one database, as `npm run bench` saves it. Memory in bytes per stream, latencies in ms. */
export interface LiveStreamsReport {
  backend: Backend;
  streams: number;
  /** Seconds the client took to open every stream, 100 at a time, until each said `ready`. */
  openSeconds: number;
  memory: { heapPerStream: number; rssPerStream: number };
  /**
   * p50/p99/max: from just before the write call (the verdict). `fromDue`: from the time the schedule wanted the
   * message written. They differ when this process's event loop stalls: the producer shares it with the server,
   * so the messages due meanwhile are written after the stall and its length counts only in `fromDue`, as it
   * would for an API client writing on its own schedule.
   */
  fanOut: {
    ratePerSecond: number;
    seconds: number;
    produced: number;
    /** Writes that failed (not produced); the first one's error. */
    failed: number;
    firstFailure: string | null;
    delivered: number;
    misrouted: number;
    duplicates: number;
    p50: number;
    p99: number;
    max: number;
    fromDue: { p50: number; p99: number; max: number };
    /** The write call alone (its transaction committed), part of the fan-out latency. */
    write: { p50: number; p99: number };
  };
  /**
   * What can make a message late: the longest event-loop delays of the server (this process, while producing)
   * and of the client, and the keep-alive burst of the live heartbeat (every stream at once, every 15 s) if one
   * fell while producing: when it began (s after the first message), how long the client took to read it, and
   * how many of the messages over the p99 target were sent from 0.5 s before it to 1 s after.
   */
  stalls: {
    serverLoopMaxMs: number;
    clientLoopMaxMs: number;
    heartbeat: { keepAlives: number; atSecond: number; readMs: number; slowNear: number; slow: number } | null;
  };
  targets: { memoryKb: number; memoryPass: boolean; p99Ms: number; p99Pass: boolean; allDelivered: boolean };
}

const MEMORY_TARGET_KB = 30;
const P99_TARGET_MS = 200;
/** Connections the client sets up at once. */
const OPEN_CONCURRENCY = 100;
/** How long the client waits for the last messages once all are produced. */
const COLLECT_TIMEOUT_MS = 10_000;
const CLIENT = new URL('./live-streams-client.ts', import.meta.url).pathname;
const ROOT = new URL('../', import.meta.url).pathname;
/** Pino's levels warn (40), error (50) and fatal (60). */
const WARNING = /"level":[456]0\b/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A full garbage collection, with or without `--expose-gc` (the bench runs under plain tsx). */
function garbageCollector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** This process's memory after full collections, once what was freed has been swept. */
async function memoryAfterGc(gc: () => void): Promise<{ heap: number; rss: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(200);
  }
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed + usage.external, rss: usage.rss };
}

/** The soft limit of open files, which must cover a socket per stream (Node cannot raise it itself). */
function openFilesLimit(): number {
  const limits = fs.readFileSync('/proc/self/limits', 'utf8');
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
  return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
}

/** A small deterministic generator, so that two runs pick the same conversations. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The visitors' process: sends a command, reads its one-line answer. */
async function startClient(): Promise<{ send<T>(command: ClientCommand): Promise<T>; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLIENT], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const exited = ended.then((): never => {
    throw new Error(`the live-streams client exited (${child.exitCode ?? child.signalCode})`);
  });
  exited.catch(() => undefined); // its exit after `stop` is not an error
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextLine = () => Promise.race([lines.next(), exited]).then((line) => String(line.value));
  const ready = await nextLine();
  if (ready !== 'ready') throw new Error(`the live-streams client said ${ready}`);
  return {
    async send<T>(command: ClientCommand) {
      child.stdin!.write(`${JSON.stringify(command)}\n`);
      return JSON.parse(await nextLine()) as T;
    },
    async stop() {
      child.stdin!.end();
      await ended;
    },
  };
}

async function buildBenchApp(env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({
    ...env,
    WIDGET_RATE_PER_IP_PER_MINUTE: '1000000000',
    WIDGET_RATE_PER_CONVERSATION_PER_MINUTE: '1000000000',
    // Every visitor of the bench connects from 127.0.0.1.
    STREAMS_PER_IP: '100000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });
  // No reply worker: operator messages ask for no answer, and nothing else should run beside the streams.
  const app = await buildApp(config, { replyWorker: false, logDestination: { write: (line) => void (WARNING.test(line) && process.stderr.write(line)) } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

/** Starts `count` widget conversations with one agent, `parallel` at a time; returns their ids and tokens. */
async function startConversations(app: FastifyInstance, chatbotId: string, count: number): Promise<ClientStream[]> {
  const started: ClientStream[] = [];
  const parallel = 20;
  for (let from = 0; from < count; from += parallel) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(parallel, count - from) }, async () => {
        const response = await app.inject({ method: 'POST', url: `/widget/v1/chatbots/${chatbotId}/conversations`, remoteAddress: '127.0.0.1' });
        if (response.statusCode !== 201) throw new Error(`start: ${response.statusCode} ${response.body}`);
        const body = response.json<{ conversation_id: string; visitor_token: string }>();
        return { id: body.conversation_id, token: body.visitor_token };
      }),
    );
    started.push(...batch);
  }
  return started;
}

/**
 * Writes operator messages to conversations drawn at random, `rate` per second for `seconds`, each stamped
 * with its due time and the time just before its write call; returns those, and the longest event-loop delay meanwhile.
 */
async function produce(app: FastifyInstance, ctx: OperationContext, conversations: ClientStream[], rate: number, seconds: number) {
  const random = seededRandom(0x11fe);
  const total = Math.round(rate * seconds);
  const writes: Promise<unknown>[] = [];
  const sentAt: number[] = [];
  let produced = 0;
  const failures: string[] = [];
  const writeMs: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const began = performance.now();
  for (let i = 0; i < total; i++) {
    const due = began + (i * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    const conversation = conversations[Math.floor(random() * conversations.length)]!;
    sentAt[i] = performance.timeOrigin + performance.now();
    const content = `live-bench ${i} ${performance.timeOrigin + due} ${sentAt[i]}`;
    // A write that fails is counted (the client does not wait for it) and reported, not fatal.
    const write = app.services.messages.send(ctx, conversation.id, { role: 'operator', content });
    const calledAt = sentAt[i]!;
    const done = () => {
      produced++;
      writeMs.push(performance.timeOrigin + performance.now() - calledAt);
    };
    writes.push(write.then(done, (error: unknown) => failures.push(String(error))));
  }
  await Promise.all(writes);
  loop.disable();
  return { sentAt, writeMs: writeMs.sort((a, b) => a - b), produced, failed: failures.length, firstFailure: failures[0] ?? null, seconds: (performance.now() - began) / 1000, loopMaxMs: Math.round(loop.max / 1e6) };
}

/** Opens `streams` idle widget streams, measures the server memory they take, then times fan-out under `rate` events per second. */
export async function measureLiveStreams(options: { backend: Backend; streams: number; seconds: number; rate?: number; log?: (line: string) => void }): Promise<LiveStreamsReport> {
  const { backend, streams, seconds } = options;
  const rate = options.rate ?? 100;
  const log = options.log ?? (() => {});
  const limit = openFilesLimit();
  // One socket per stream here and in the client, plus the database, the logs and some slack.
  if (limit < streams + 200) throw new Error(`live streams: ${streams} streams need \`ulimit -n\` ≥ ${streams + 200} (it is ${limit})`);
  const gc = garbageCollector();
  const env = benchDatabaseEnv(backend, 'live');
  const app = await buildBenchApp(env).catch(async (error: unknown) => {
    await dropBenchDatabase(env);
    throw error;
  });
  let client: Awaited<ReturnType<typeof startClient>> | null = null;
  try {
    const agent = await createBenchAgent(app.database.db, syntheticText(), 'Live streams');
    log(`live streams, ${backend}: starting ${streams} conversations…`);
    const conversations = await startConversations(app, agent.chatbotId, streams);
    await settle(env);
    client = await startClient();
    const { port } = app.server.address() as AddressInfo;
    const before = await memoryAfterGc(gc);
    log(`live streams, ${backend}: opening ${streams} streams…`);
    const opened = await client.send<OpenResult>({ open: { url: `http://127.0.0.1:${port}`, streams: conversations, concurrency: OPEN_CONCURRENCY } });
    if (opened.failed) throw new Error(`live streams: ${opened.failed} of ${streams} streams failed to open, first: ${opened.firstError}`);
    const after = await memoryAfterGc(gc);

    log(`live streams, ${backend}: ${rate} operator messages per second for ${seconds} s…`);
    const production = await produce(app, systemContext(agent.workspaceId, 'bench'), conversations, rate, seconds);
    const { sentAt, produced } = production;
    const received = await client.send<CollectResult>({ collect: { expected: produced, timeoutMs: COLLECT_TIMEOUT_MS } });
    const latencies = received.latencies.map(([, ms]) => ms).sort((a, b) => a - b);
    const fromDue = received.latencies.map(([, , ms]) => ms).sort((a, b) => a - b);
    let heartbeat: LiveStreamsReport['stalls']['heartbeat'] = null;
    // A heartbeat's burst that began while the messages were produced.
    const burst = received.keepAlives.find((b) => b.first >= sentAt[0]! && b.first <= sentAt.at(-1)!);
    if (burst) {
      const { first, last } = burst;
      const slow = received.latencies.filter(([, ms]) => ms > P99_TARGET_MS);
      const near = slow.filter(([n]) => sentAt[n]! >= first - 500 && sentAt[n]! <= last + 1000);
      heartbeat = { keepAlives: burst.count, atSecond: Math.round((first - sentAt[0]!) / 100) / 10, readMs: Math.round(last - first), slowNear: near.length, slow: slow.length };
    }
    const round = (ms: number) => Math.round(ms * 10) / 10;
    const p99 = round(percentile(latencies, 99));
    const heapPerStream = Math.round((after.heap - before.heap) / streams);
    const rssPerStream = Math.round((after.rss - before.rss) / streams);
    const allDelivered = production.failed === 0 && received.delivered === produced && received.misrouted === 0 && received.duplicates === 0 && received.ended === 0;
    return {
      backend,
      streams,
      openSeconds: Math.round(opened.seconds * 10) / 10,
      memory: { heapPerStream, rssPerStream },
      fanOut: {
        ratePerSecond: Math.round(produced / production.seconds),
        seconds: Math.round(production.seconds * 10) / 10,
        produced,
        failed: production.failed,
        firstFailure: production.firstFailure,
        delivered: received.delivered,
        misrouted: received.misrouted,
        duplicates: received.duplicates,
        p50: round(percentile(latencies, 50)),
        p99,
        max: round(latencies.at(-1) ?? 0),
        write: { p50: round(percentile(production.writeMs, 50)), p99: round(percentile(production.writeMs, 99)) },
        fromDue: { p50: round(percentile(fromDue, 50)), p99: round(percentile(fromDue, 99)), max: round(fromDue.at(-1) ?? 0) },
      },
      stalls: { serverLoopMaxMs: production.loopMaxMs, clientLoopMaxMs: Math.round(received.loopDelayMaxMs), heartbeat },
      targets: {
        memoryKb: MEMORY_TARGET_KB,
        // The RSS counts what the heap does not (socket handles, parser state): the verdict takes the larger.
        memoryPass: Math.max(heapPerStream, rssPerStream) <= MEMORY_TARGET_KB * 1024,
        p99Ms: P99_TARGET_MS,
        p99Pass: latencies.length > 0 && p99 <= P99_TARGET_MS,
        allDelivered,
      },
    };
  } finally {
    await client?.stop();
    await app.close();
    await dropBenchDatabase(env);
  }
}

/** The report as the Markdown docs/performance.md keeps (one database), with the verdicts on issue 32's targets. */
export function liveStreamsTable(report: LiveStreamsReport): string {
  const { memory, fanOut, stalls, targets } = report;
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const grouped = (n: number) => n.toLocaleString('en-US');
  return [
    `Live widget streams, ${report.backend}: ${grouped(report.streams)} idle streams on one instance (opened in ${report.openSeconds} s); ` +
      `operator messages to random conversations at ${fanOut.ratePerSecond} per second for ${fanOut.seconds} s.`,
    '',
    '| streams | heap KB / stream | RSS KB / stream | fan-out p50 ms | fan-out p99 ms | max ms | p99 / max from due time ms | write alone p50 / p99 ms | delivered / produced |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${grouped(report.streams)} | ${kb(memory.heapPerStream)} | ${kb(memory.rssPerStream)} | ${fanOut.p50.toFixed(1)} | ${fanOut.p99.toFixed(1)} | ${fanOut.max.toFixed(1)} | ` +
      `${fanOut.fromDue.p99.toFixed(1)} / ${fanOut.fromDue.max.toFixed(1)} | ${fanOut.write.p50.toFixed(1)} / ${fanOut.write.p99.toFixed(1)} | ${fanOut.delivered} / ${fanOut.produced} |`,
    '',
    `- memory per idle stream: ${kb(Math.max(memory.heapPerStream, memory.rssPerStream))} KB, target ≤ ${targets.memoryKb} KB: ${verdict(targets.memoryPass)}`,
    `- fan-out p99: ${fanOut.p99.toFixed(1)} ms, target ≤ ${targets.p99Ms} ms: ${verdict(targets.p99Pass)}`,
    `- every message delivered once, to its conversation's stream only: ${verdict(targets.allDelivered)}` +
      (targets.allDelivered ? '' : ` (${fanOut.failed} writes failed${fanOut.firstFailure ? `, first: ${fanOut.firstFailure}` : ''}; ${fanOut.misrouted} misrouted, ${fanOut.duplicates} duplicated)`),
    `- longest event-loop delay while producing: server ${stalls.serverLoopMaxMs} ms, client ${stalls.clientLoopMaxMs} ms` +
      (stalls.heartbeat
        ? `; the heartbeat's ${grouped(stalls.heartbeat.keepAlives)} keep-alives came at ${stalls.heartbeat.atSecond} s, read in ${stalls.heartbeat.readMs} ms` +
          (stalls.heartbeat.slow ? `; ${stalls.heartbeat.slowNear} of the ${stalls.heartbeat.slow} messages over ${targets.p99Ms} ms were written around it` : '')
        : '; no heartbeat while producing'),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'sqlite' },
      streams: { type: 'string', default: '5000' },
      seconds: { type: 'string', default: '10' },
      rate: { type: 'string', default: '100' },
    },
  });
  const report = await measureLiveStreams({
    backend: values.db === 'postgres' ? 'postgres' : 'sqlite',
    streams: Number(values.streams),
    seconds: Number(values.seconds),
    rate: Number(values.rate),
    log: (line) => console.error(line),
  });
  console.log(liveStreamsTable(report));
}

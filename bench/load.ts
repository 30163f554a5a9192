import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const ROOT = new URL('../', import.meta.url).pathname;
const LOAD_PROCESS = new URL('./load-process.ts', import.meta.url).pathname;

/** What one load run measured. Latencies in milliseconds, to the microsecond. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  non2xx: number;
  requests: number;
}

/** One kind of request to send. */
export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  path: string;
  key?: string;
  /** A new body (and Idempotency-Key) per request, for writes. */
  uniqueWrite?: boolean;
  /** With `uniqueWrite`: no Idempotency-Key (the write without the idempotency layer, a reference). */
  withoutIdempotencyKey?: boolean;
  /** Expect 401s (the invalid-key storm): they are not counted as errors. */
  expect401?: boolean;
}

/** The value below which `share` of the sorted values lie. */
function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

const toMicros = (ms: number) => Math.round(ms * 1000) / 1000;

/** The raw figures of one load run, which `summarize` turns into a LoadResult (one run or several slices). */
export interface LoadSample {
  /** Every response's time, in milliseconds. */
  times: number[];
  seconds: number;
  errors: number;
  non2xx: number;
  requests: number;
}

/**
 * Drives one URL with autocannon for `seconds` at `connections`, from this process, and keeps every
 * response's own time (autocannon's histogram keeps whole milliseconds, too coarse for sub-millisecond
 * answers).
 */
export async function sample(spec: LoadSpec, connections: number, seconds: number): Promise<LoadSample> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (spec.key) headers.authorization = `Bearer ${spec.key}`;
  const request: autocannon.Request = { method: spec.method ?? 'GET', path: spec.path, headers };
  if (spec.uniqueWrite) {
    request.setupRequest = (req: autocannon.Request) => {
      const id = randomUUID();
      const writeHeaders = spec.withoutIdempotencyKey ? headers : { ...headers, 'idempotency-key': id };
      return { ...req, headers: writeHeaders, body: JSON.stringify({ email: `${id}@example.com`, name: 'Bench' }) };
    };
  }
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    // autocannon stops at its first sampling tick after `duration` (every second by default): a shorter run
    // (the smoke test's) samples as often as it lasts, so that it ends in time.
    const sampleInt = Math.min(1000, seconds * 1000);
    const instance = autocannon({ url: spec.url, connections, duration: seconds, sampleInt, requests: [request] }, (error, done) =>
      error ? reject(error) : resolve(done),
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => times.push(responseTime));
  });
  return {
    times,
    seconds: result.duration,
    errors: result.errors + result.timeouts + (spec.expect401 ? 0 : result.non2xx),
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
}

/** One LoadResult from one or more samples of the same requests: throughput over their summed time. */
export function summarize(samples: LoadSample[]): LoadResult {
  const sorted = Float64Array.from(samples.flatMap((s) => s.times)).sort();
  const total = (pick: (s: LoadSample) => number) => samples.reduce((sum, s) => sum + pick(s), 0);
  const seconds = total((s) => s.seconds);
  return {
    rps: seconds > 0 ? total((s) => s.requests) / seconds : 0,
    p50: toMicros(percentile(sorted, 0.5)),
    p99: toMicros(percentile(sorted, 0.99)),
    mean: toMicros(sorted.length ? sorted.reduce((sum, time) => sum + time, 0) / sorted.length : 0),
    errors: total((s) => s.errors),
    non2xx: total((s) => s.non2xx),
    requests: total((s) => s.requests),
  };
}

/** One load run (`sample`), summarized. */
export async function load(spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult> {
  return summarize([await sample(spec, connections, seconds)]);
}

/** A load generator in its own process, idle between its runs. */
export interface LoadProcess {
  /** One load run (`load`) in that process. */
  run(spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult>;
  stop(): Promise<void>;
}

/**
 * Starts a load generator in its own process, for a measurement beside another load from this one: a latency
 * taken in this process would include the time this process's event loop spends on the other load's
 * responses. Resolves once the process is ready; it waits, idle, for its runs. Started once with the servers,
 * so that no run waits for a process to start.
 */
export async function startLoadProcess(): Promise<LoadProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', LOAD_PROCESS], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = ended.then((): never => {
    throw new Error(`the load process exited (${child.exitCode ?? child.signalCode})`);
  });
  exited.catch(() => undefined); // its exit after `stop` is not an error
  const nextLine = () => Promise.race([lines.next(), exited]).then((line) => String(line.value));
  const ready = await nextLine();
  if (ready !== 'ready') throw new Error(`the load process said ${ready}`);
  return {
    run: async (spec, connections, seconds) => {
      child.stdin!.write(`${JSON.stringify({ spec, connections, seconds })}\n`);
      return JSON.parse(await nextLine()) as LoadResult;
    },
    stop: async () => {
      child.stdin!.end();
      await ended;
    },
  };
}

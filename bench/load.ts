import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

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
  /** Expect 401s (the invalid-key storm): they are not counted as errors. */
  expect401?: boolean;
}

/** The value below which `share` of the sorted values lie. */
function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

const toMicros = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * Drives one URL with autocannon for `seconds` at `connections`, from this process. Percentiles come from
 * every response's own time (autocannon's histogram keeps whole milliseconds, too coarse for sub-millisecond
 * answers).
 */
export async function load(spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (spec.key) headers.authorization = `Bearer ${spec.key}`;
  const request: autocannon.Request = { method: spec.method ?? 'GET', path: spec.path, headers };
  if (spec.uniqueWrite) {
    request.setupRequest = (req: autocannon.Request) => {
      const id = randomUUID();
      return { ...req, headers: { ...headers, 'idempotency-key': id }, body: JSON.stringify({ email: `${id}@example.com`, name: 'Bench' }) };
    };
  }
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url: spec.url, connections, duration: seconds, requests: [request] }, (error, done) =>
      error ? reject(error) : resolve(done),
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => times.push(responseTime));
  });
  const sorted = Float64Array.from(times).sort();
  const non2xx = result.non2xx;
  return {
    rps: result.requests.average,
    p50: toMicros(percentile(sorted, 0.5)),
    p99: toMicros(percentile(sorted, 0.99)),
    mean: toMicros(sorted.length ? sorted.reduce((sum, time) => sum + time, 0) / sorted.length : 0),
    errors: result.errors + result.timeouts + (spec.expect401 ? 0 : non2xx),
    non2xx,
    requests: result.requests.total,
  };
}

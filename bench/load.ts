import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

/** What one load run measured. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** Mean latency in ms, with decimals (autocannon's percentiles are whole milliseconds). */
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

/** Drives one URL with autocannon for `seconds` at `connections`, from this process. */
export async function load(spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (spec.key) headers.authorization = `Bearer ${spec.key}`;
  const result = await autocannon({
    url: spec.url,
    connections,
    duration: seconds,
    requests: [
      {
        method: spec.method ?? 'GET',
        path: spec.path,
        headers,
        ...(spec.uniqueWrite
          ? {
              setupRequest: (request: autocannon.Request) => {
                const id = randomUUID();
                return { ...request, headers: { ...headers, 'idempotency-key': id }, body: JSON.stringify({ email: `${id}@example.com`, name: 'Bench' }) };
              },
            }
          : {}),
      },
    ],
  });
  const non2xx = result.non2xx;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: Math.round(result.latency.mean * 1000) / 1000,
    errors: result.errors + result.timeouts + (spec.expect401 ? 0 : non2xx),
    non2xx,
    requests: result.requests.total,
  };
}

import type { DataSet } from './generate.js';
import { load, type LoadResult, type LoadSpec } from './load.js';
import type { BenchServer } from './processes.js';

/** The figures of one scenario at one concurrency, with its target. */
export interface ScenarioResult extends LoadResult {
  scenario: string;
  connections: number;
  /** CPU time the answering server spent per request (user + system), in microseconds; null if not measured alone. */
  cpuUsPerRequest: number | null;
  /** The figure compared with the target, e.g. rps / bare rps. */
  ratio: number | null;
  target: string;
  pass: boolean | null;
}

interface Servers {
  service: BenchServer;
  baseline: BenchServer;
}

const INVALID_KEY = 'wsk_invalidinvalidinvalidinvalidinva000000';

/**
 * The calibration: the bare route plus this many microseconds of synchronous work per request. Measured in
 * the same run, it shows how much work per request each throughput target leaves on this machine.
 */
export const CALIBRATION_WORK_US = [10, 20, 40, 80, 160, 320];

/** Latency of `a` relative to `b` (same number of connections), by p50. */
function latencyRatio(a: LoadResult, b: LoadResult): number {
  return a.p50 / Math.max(b.p50, 0.001);
}

/** Drives one server and reads how much CPU time it spent on the requests. */
async function measure(server: BenchServer, spec: Omit<LoadSpec, 'url'>, connections: number, seconds: number) {
  const before = server.cpuMicros();
  const result = await load({ ...spec, url: server.url }, connections, seconds);
  const cpu = server.cpuMicros() - before;
  return { ...result, cpuUsPerRequest: result.requests > 0 ? Math.round((cpu / result.requests) * 10) / 10 : 0 };
}

/**
 * Runs every scenario once at one concurrency. Baselines are measured in the same run, so each
 * target is a ratio that holds on a noisy machine.
 */
export async function runScenarios(servers: Servers, data: DataSet, connections: number, seconds: number): Promise<ScenarioResult[]> {
  const { service, baseline } = servers;
  const out: ScenarioResult[] = [];
  const record = (scenario: string, result: LoadResult & { cpuUsPerRequest: number | null }, ratio: number | null, target: string, pass: boolean | null) =>
    out.push({ scenario, connections, ...result, ratio: ratio === null ? null : Math.round(ratio * 100) / 100, target, pass });

  const bare = await measure(baseline, { path: '/bare' }, connections, seconds);
  record('bare', bare, null, 'baseline', null);
  for (const us of CALIBRATION_WORK_US) {
    const worked = await measure(baseline, { path: `/bare-work/${us}` }, connections, seconds);
    record(`bare + ${us} µs of work`, worked, worked.rps / bare.rps, 'calibration', null);
  }
  const bareWrite = await measure(baseline, { method: 'POST', path: '/bare-write', uniqueWrite: true }, connections, seconds);
  record('bare-write', bareWrite, null, 'baseline', null);
  const twoInserts = await measure(baseline, { method: 'POST', path: '/bare-write-two-inserts', uniqueWrite: true }, connections, seconds);
  record('bare-write, two inserts only', twoInserts, twoInserts.rps / bareWrite.rps, 'reference', null);

  const botId = data.main.chatbotIds[Math.floor(data.main.chatbotIds.length / 2)]!;
  // The service's data access alone, in a bare route: the part of each read that no service can avoid.
  const bareRead = await measure(baseline, { path: `/bare-read/${data.main.workspaceId}/${botId}` }, connections, seconds);
  record('bare + agent read (data access only)', bareRead, bareRead.rps / bare.rps, 'reference', null);
  const bareList = await measure(baseline, { path: `/bare-list/${data.main.workspaceId}` }, connections, seconds);
  record('bare + 20-lead page read (data access only)', bareList, bareList.rps / bare.rps, 'reference', null);

  const botPath = `/api/v1/chatbots/${botId}`;
  const getBot = await measure(service, { path: botPath, key: data.main.key }, connections, seconds);
  record('GET /chatbots/{id}', getBot, getBot.rps / bare.rps, '>= 0.40 x bare rps', getBot.rps / bare.rps >= 0.4 && getBot.errors === 0);

  const firstPage = await measure(service, { path: '/api/v1/leads?limit=20', key: data.main.key }, connections, seconds);
  record('GET /leads?limit=20', firstPage, firstPage.rps / bare.rps, '>= 0.25 x bare rps', firstPage.rps / bare.rps >= 0.25 && firstPage.errors === 0);

  if (data.main.deepCursor) {
    const deep = await measure(service, { path: `/api/v1/leads?limit=20&cursor=${data.main.deepCursor}`, key: data.main.key }, connections, seconds);
    const ratio = latencyRatio(deep, firstPage);
    record('GET /leads deep page (90% in)', deep, ratio, 'p50 <= 1.2 x first page p50', ratio <= 1.2 && deep.errors === 0);
  }

  const post = await measure(service, { method: 'POST', path: '/api/v1/leads', key: data.main.key, uniqueWrite: true }, connections, seconds);
  record('POST /leads + Idempotency-Key', post, post.rps / bareWrite.rps, '>= 0.60 x bare-write rps', post.rps / bareWrite.rps >= 0.6 && post.errors === 0);
  record('POST /leads vs two inserts only', post, post.rps / twoInserts.rps, 'reference', null);

  const small = await measure(service, { path: '/api/v1/analytics', key: data.small.key }, connections, seconds);
  record('GET /analytics (10k messages)', small, null, 'reference', null);
  const large = await measure(service, { path: '/api/v1/analytics', key: data.large.key }, connections, seconds);
  const analyticsRatio = latencyRatio(large, small);
  record('GET /analytics (1M messages)', large, analyticsRatio, 'p50 <= 3 x 10k p50', analyticsRatio <= 3 && large.errors === 0);

  // The 401 storm: invalid keys at full concurrency, on its own (its throughput against bare). Then the
  // storm again with one connection sending a valid key beside it, whose latency is compared with that
  // connection alone: the server serves both, so the storm's own figure is taken from the first phase.
  const bareRefusal = await measure(baseline, { path: '/bare-refusal', expect401: true }, connections, seconds);
  record('bare refusal (401 + log line)', bareRefusal, bareRefusal.rps / bare.rps, 'reference', null);
  const storm = await measure(service, { path: botPath, key: INVALID_KEY, expect401: true }, connections, seconds);
  record('401 storm (invalid keys)', storm, storm.rps / bare.rps, '>= 0.5 x bare rps', storm.rps / bare.rps >= 0.5 && storm.non2xx === storm.requests);
  const probeAlone = await measure(service, { path: botPath, key: data.main.key }, 1, seconds);
  const [, probe] = await Promise.all([
    load({ url: service.url, path: botPath, key: INVALID_KEY, expect401: true }, connections, seconds),
    load({ url: service.url, path: botPath, key: data.main.key }, 1, seconds),
  ]);
  record('valid key during the storm', { ...probe, cpuUsPerRequest: null }, latencyRatio(probe, probeAlone), 'latency vs alone (reported)', probe.errors === 0 ? null : false);
  return out;
}

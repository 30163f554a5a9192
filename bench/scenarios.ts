import type { DataSet } from './generate.js';
import { load, type LoadResult } from './load.js';

/** The figures of one scenario at one concurrency, with its target. */
export interface ScenarioResult extends LoadResult {
  scenario: string;
  connections: number;
  /** The figure compared with the target, e.g. rps / bare rps. */
  ratio: number | null;
  target: string;
  pass: boolean | null;
}

interface Urls {
  service: string;
  baseline: string;
}

const INVALID_KEY = 'wsk_invalidinvalidinvalidinvalidinva000000';

/**
 * Latency of `a` relative to `b` (same number of connections): by p50, or, when the reference p50 is under
 * 2 ms where autocannon's whole-millisecond figures cannot tell values apart, by the mean latency that the
 * closed loop implies (Little's law: connections / throughput), i.e. the inverse ratio of throughputs.
 */
function latencyRatio(a: LoadResult, b: LoadResult): number {
  return b.p50 >= 2 ? a.p50 / b.p50 : b.rps / Math.max(a.rps, 0.001);
}

/**
 * Runs every scenario once at one concurrency. Baselines are measured in the same run, so each
 * target is a ratio that holds on a noisy machine.
 */
export async function runScenarios(urls: Urls, data: DataSet, connections: number, seconds: number): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  const record = (scenario: string, result: LoadResult, ratio: number | null, target: string, pass: boolean | null) =>
    out.push({ scenario, connections, ...result, ratio: ratio === null ? null : Math.round(ratio * 100) / 100, target, pass });

  const bare = await load({ url: urls.baseline, path: '/bare' }, connections, seconds);
  record('bare', bare, null, 'baseline', null);
  const bareWrite = await load({ url: urls.baseline, method: 'POST', path: '/bare-write', uniqueWrite: true }, connections, seconds);
  record('bare-write', bareWrite, null, 'baseline', null);

  const botId = data.main.chatbotIds[Math.floor(data.main.chatbotIds.length / 2)]!;
  const getBot = await load({ url: urls.service, path: `/api/v1/chatbots/${botId}`, key: data.main.key }, connections, seconds);
  record('GET /chatbots/{id}', getBot, getBot.rps / bare.rps, '>= 0.40 x bare rps', getBot.rps / bare.rps >= 0.4 && getBot.errors === 0);

  const firstPage = await load({ url: urls.service, path: '/api/v1/leads?limit=20', key: data.main.key }, connections, seconds);
  record('GET /leads?limit=20', firstPage, firstPage.rps / bare.rps, '>= 0.25 x bare rps', firstPage.rps / bare.rps >= 0.25 && firstPage.errors === 0);

  if (data.main.deepCursor) {
    const deep = await load({ url: urls.service, path: `/api/v1/leads?limit=20&cursor=${data.main.deepCursor}`, key: data.main.key }, connections, seconds);
    const ratio = latencyRatio(deep, firstPage);
    record('GET /leads deep page (90% in)', deep, ratio, 'p50 <= 1.2 x first page p50', ratio <= 1.2 && deep.errors === 0);
  }

  const post = await load({ url: urls.service, method: 'POST', path: '/api/v1/leads', key: data.main.key, uniqueWrite: true }, connections, seconds);
  record('POST /leads + Idempotency-Key', post, post.rps / bareWrite.rps, '>= 0.60 x bare-write rps', post.rps / bareWrite.rps >= 0.6 && post.errors === 0);

  const small = await load({ url: urls.service, path: '/api/v1/analytics', key: data.small.key }, connections, seconds);
  record('GET /analytics (10k messages)', small, null, 'reference', null);
  const large = await load({ url: urls.service, path: '/api/v1/analytics', key: data.large.key }, connections, seconds);
  const analyticsRatio = latencyRatio(large, small);
  record('GET /analytics (1M messages)', large, analyticsRatio, 'p50 <= 3 x 10k p50', analyticsRatio <= 3 && large.errors === 0);

  // The 401 storm: invalid keys at full concurrency, while one connection with a valid key measures
  // latency; compared with that connection alone.
  const probeAlone = await load({ url: urls.service, path: `/api/v1/chatbots/${botId}`, key: data.main.key }, 1, seconds);
  const [storm, probe] = await Promise.all([
    load({ url: urls.service, path: `/api/v1/chatbots/${botId}`, key: INVALID_KEY, expect401: true }, connections, seconds),
    load({ url: urls.service, path: `/api/v1/chatbots/${botId}`, key: data.main.key }, 1, seconds),
  ]);
  record('401 storm (invalid keys)', storm, storm.rps / bare.rps, '>= 0.5 x bare rps', storm.rps / bare.rps >= 0.5 && storm.non2xx === storm.requests);
  record('valid key during the storm', probe, latencyRatio(probe, probeAlone), 'latency vs alone (reported)', probe.errors === 0 ? null : false);
  return out;
}

import type { DataSet } from './generate.js';
import { load, sample, summarize, type LoadProcess, type LoadResult, type LoadSample, type LoadSpec } from './load.js';
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
  /** Throughput of what the scenario was compared with, measured in the slices between its own (`alternate`). */
  comparedRps?: number;
}

/** What one measurement gives a row. */
type ScenarioMeasure = LoadResult & { cpuUsPerRequest: number | null; comparedRps?: number };

interface Servers {
  service: BenchServer;
  baseline: BenchServer;
  /** The load generator in its own process that drives the valid key beside the storm. */
  probe: LoadProcess;
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
  return { ...result, cpuUsPerRequest: perRequest(cpu, result.requests) };
}

const perRequest = (cpuMicros: number, requests: number) => (requests > 0 ? Math.round((cpuMicros / requests) * 10) / 10 : 0);

/** One of the alternated measurements: a server and the requests it is sent. */
interface Side {
  server: BenchServer;
  spec: Omit<LoadSpec, 'url'>;
}

/**
 * A scenario and what it is compared with (its baseline, or the same call on a smaller set), measured in
 * alternating slices of about a second (baseline, scenario, baseline, …) for `seconds` each: both then meet
 * the same moments of a noisy machine, where a baseline measured a minute earlier can differ from itself by
 * half. Each side's figures add up its slices.
 */
async function alternate(sides: Side[], connections: number, seconds: number) {
  const slices = Math.max(1, Math.round(seconds));
  const taken = sides.map((side) => ({ side, samples: [] as LoadSample[], cpu: 0 }));
  for (let slice = 0; slice < slices; slice++) {
    for (const entry of taken) {
      const before = entry.side.server.cpuMicros();
      entry.samples.push(await sample({ ...entry.side.spec, url: entry.side.server.url }, connections, seconds / slices));
      entry.cpu += entry.side.server.cpuMicros() - before;
    }
  }
  return taken.map(({ samples, cpu }) => {
    const result = summarize(samples);
    return { ...result, cpuUsPerRequest: perRequest(cpu, result.requests) };
  });
}

/**
 * Runs every scenario once at one concurrency. Baselines are measured in the same run, so each
 * target is a ratio that holds on a noisy machine.
 */
export async function runScenarios(servers: Servers, data: DataSet, connections: number, seconds: number): Promise<ScenarioResult[]> {
  const { service, baseline, probe: probeProcess } = servers;
  const out: ScenarioResult[] = [];
  const record = (scenario: string, result: ScenarioMeasure, ratio: number | null, target: string, pass: boolean | null) =>
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

  // Each target below is measured against its comparison in alternating slices (`alternate`); the row
  // keeps the comparison's own throughput beside the ratio (`comparedRps`).
  const withCompared = (result: ScenarioMeasure, compared: LoadResult) => ({ ...result, comparedRps: Math.round(compared.rps) });
  const bareSide: Side = { server: baseline, spec: { path: '/bare' } };
  const botPath = `/api/v1/chatbots/${botId}`;
  const [bareForBot, getBot] = await alternate([bareSide, { server: service, spec: { path: botPath, key: data.main.key } }], connections, seconds);
  const botRatio = getBot!.rps / bareForBot!.rps;
  record('GET /chatbots/{id}', withCompared(getBot!, bareForBot!), botRatio, '>= 0.35 x bare rps', botRatio >= 0.35 && getBot!.errors === 0);

  const pageSide = (cursor: string | null): Side => ({
    server: service,
    spec: { path: `/api/v1/leads?limit=20${cursor ? `&cursor=${cursor}` : ''}`, key: data.main.key },
  });
  const pages = [bareSide, pageSide(null), ...(data.main.deepCursor ? [pageSide(data.main.deepCursor)] : [])];
  const [bareForPage, firstPage, deep] = await alternate(pages, connections, seconds);
  const pageRatio = firstPage!.rps / bareForPage!.rps;
  record('GET /leads?limit=20', withCompared(firstPage!, bareForPage!), pageRatio, '>= 0.15 x bare rps', pageRatio >= 0.15 && firstPage!.errors === 0);
  if (deep) {
    const ratio = latencyRatio(deep, firstPage!);
    record('GET /leads deep page (90% in)', deep, ratio, 'p50 <= 1.2 x first page p50', ratio <= 1.2 && deep.errors === 0);
  }

  // The same POST without an Idempotency-Key, in the same slices: what the idempotency layer costs (a
  // reference; the target is the POST with the key).
  const writeSpec = { method: 'POST', uniqueWrite: true } as const;
  const leadsPost = { ...writeSpec, path: '/api/v1/leads', key: data.main.key };
  const [bareWriteForPost, post, postWithoutKey] = await alternate(
    [
      { server: baseline, spec: { ...writeSpec, path: '/bare-write' } },
      { server: service, spec: leadsPost },
      { server: service, spec: { ...leadsPost, withoutIdempotencyKey: true } },
    ],
    connections,
    seconds,
  );
  const postRatio = post!.rps / bareWriteForPost!.rps;
  record('POST /leads + Idempotency-Key', withCompared(post!, bareWriteForPost!), postRatio, '>= 0.50 x bare-write rps', postRatio >= 0.5 && post!.errors === 0);
  record('POST /leads vs two inserts only', post!, post!.rps / twoInserts.rps, 'reference', null);
  record('POST /leads without Idempotency-Key', withCompared(postWithoutKey!, bareWriteForPost!), postWithoutKey!.rps / bareWriteForPost!.rps, 'reference', null);

  const analyticsSide = (key: string): Side => ({ server: service, spec: { path: '/api/v1/analytics', key } });
  const [small, large] = await alternate([analyticsSide(data.small.key), analyticsSide(data.large.key)], connections, seconds);
  record('GET /analytics (10k messages)', small!, null, 'reference', null);
  const analyticsRatio = latencyRatio(large!, small!);
  record('GET /analytics (1M messages)', large!, analyticsRatio, 'p50 <= 3 x 10k p50', analyticsRatio <= 3 && large!.errors === 0);

  // The 401 storm: invalid keys at full concurrency, on its own (its throughput against bare). Then the
  // storm again with one connection sending a valid key beside it, whose latency is compared with that
  // connection alone: the server serves both, so the storm's own figure is taken from the first phase.
  const bareRefusal = await measure(baseline, { path: '/bare-refusal', expect401: true }, connections, seconds);
  record('bare refusal (401 + log line)', bareRefusal, bareRefusal.rps / bare.rps, 'reference', null);
  const stormSpec = { path: botPath, key: INVALID_KEY, expect401: true };
  const [bareForStorm, storm] = await alternate([bareSide, { server: service, spec: stormSpec }], connections, seconds);
  const stormRatio = storm!.rps / bareForStorm!.rps;
  record('401 storm (invalid keys)', withCompared(storm!, bareForStorm!), stormRatio, '>= 0.40 x bare rps', stormRatio >= 0.4 && storm!.non2xx === storm!.requests);
  // The valid key's connection runs in its own process, so its latency is the server's, not this process's
  // event loop busy with the storm's responses. Alone first, then beside the storm.
  const probeSpec = { url: service.url, path: botPath, key: data.main.key };
  const probeAlone = await probeProcess.run(probeSpec, 1, seconds);
  const [, probe] = await Promise.all([load({ url: service.url, ...stormSpec }, connections, seconds), probeProcess.run(probeSpec, 1, seconds)]);
  const probeRatio = latencyRatio(probe, probeAlone);
  // "No effect" within the tolerance the deep page is given: p50 at most 1.2 x the connection's p50 alone.
  record('valid key during the storm', { ...probe, cpuUsPerRequest: null }, probeRatio, 'p50 <= 1.2 x alone', probeRatio <= 1.2 && probe.errors === 0);
  return out;
}

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { freePort } from '../test/helpers/processes.js';

const ROOT = new URL('../', import.meta.url).pathname;
/** Linux reports process CPU time in ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** How each server starts: the arguments that follow node (and its options) on the command line. */
export interface ServerEntries {
  service: string[];
  baseline: string[];
}

/**
 * Compiles both servers with tsc, so that each runs as built JavaScript: the service as `npm start` runs
 * it (`dist/server.js`), the baseline server from `build/bench/`. Under tsx, code is transpiled with names
 * kept (a `__name` call for each named inner function, every time it is created), which a production
 * process does not pay. Returns the two entry points.
 */
export function buildServers(): ServerEntries {
  const tsc = `${ROOT}node_modules/typescript/bin/tsc`;
  for (const project of ['tsconfig.build.json', 'bench/tsconfig.build.json']) {
    execFileSync(process.execPath, [tsc, '-p', project], { cwd: ROOT, stdio: 'inherit' });
  }
  return { service: ['dist/server.js'], baseline: ['build/bench/bench/baseline-server.js'] };
}

/**
 * Both servers from their TypeScript sources under tsx, nothing built (`--from-source`): for the smoke test,
 * which checks that the benchmark still works, not its figures. The two tsc builds took most of its time,
 * and tsx's transpiled code is slower than the built one (see `buildServers`), so figures taken this way do
 * not count.
 */
export function sourceServers(): ServerEntries {
  return { service: ['--import', 'tsx', 'src/server.ts'], baseline: ['--import', 'tsx', 'bench/baseline-server.ts'] };
}

/**
 * The node options `npm start` gives the service (package.json's start script: the young generation's
 * minimum size), so that the benchmark runs the service as it is deployed. The baseline server runs with
 * node's defaults, its best: a larger young generation makes the bare route about 15 % slower here (its
 * allocations then spread over more memory than the CPU caches hold), and the ceiling must not be lowered.
 */
export function startNodeOptions(): string[] {
  const { scripts } = JSON.parse(fs.readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } };
  const match = /^node\s+(.*?)\s*dist\/server\.js$/.exec(scripts.start);
  if (!match) throw new Error(`package.json's start script is not "node [options] dist/server.js": ${scripts.start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}

/** A server process under test, with its peak memory. */
export interface BenchServer {
  url: string;
  child: ChildProcess;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  /** CPU time the process has used so far (user + system), in microseconds; 0 where /proc is missing. */
  cpuMicros(): number;
  stop(): Promise<void>;
}

/**
 * Starts a server (an entry of `buildServers` or `sourceServers`) as its own process.
 * `nodeArgs` go to node before the entry point, e.g. `--cpu-prof` to profile the server under load.
 */
export async function startProcess(entry: string[], env: Record<string, string>, nodeArgs: string[] = []): Promise<BenchServer> {
  const port = await freePort();
  const name = entry.at(-1)!;
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    try {
      await fetch(`${url}/readyz`);
      await fetch(`${url}/bare`).catch(() => undefined);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${name} did not start: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    child,
    peakRssMb: () => {
      try {
        const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
        const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
        return Math.round(kb / 1024);
      } catch {
        return 0;
      }
    },
    cpuMicros: () => {
      try {
        // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised command name): utime and stime in ticks.
        const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
      } catch {
        return 0;
      }
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      // unref'd: a pending timer would keep the run alive for its 5 s after the server has exited
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

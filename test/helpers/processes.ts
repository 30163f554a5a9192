import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * The built entry points (dist/, rebuilt by the suites' global setup when src/ changed): the child processes
 * run the code `npm start` and `npm run cli` run, and start in a second instead of compiling TypeScript first.
 */
export const SERVER_ENTRY = `${ROOT}dist/server.js`;
export const CLI_ENTRY = `${ROOT}dist/cli.js`;

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** What a CLI run printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the ops CLI (`node dist/cli.js …`) with the given environment (its logger silenced) and
 * resolves with exit code and output. Never rejects: a failing command resolves with its non-zero code.
 */
export function cli(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, ...args],
      { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs a CLI command that must succeed with `--json` appended, and returns the JSON it printed. */
export async function cliJson<T = Record<string, unknown>>(env: Record<string, string>, ...args: string[]): Promise<T> {
  const run = await cli(env, ...args, '--json');
  if (run.code !== 0) throw new Error(`cli ${args.join(' ')} --json exited with ${run.code}:\n${run.stderr}${run.stdout}`);
  return JSON.parse(run.stdout) as T;
}

/** A server child process (node itself, no wrapper, so a signal reaches the server). */
export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Starts the built server (`node dist/server.js`) with the given environment and waits until /readyz answers 200. */
export async function startServer(env: Record<string, string>, options: { port?: number; readyTimeoutMs?: number } = {}): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  let ended = false;
  void exited.then(() => (ended = true));
  for (;;) {
    if (ended) throw new Error(`server exited before it was ready:\n${log}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready in time:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    port,
    child,
    output: () => log,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (!ended) child.kill(signal);
      return exited;
    },
  };
}

/** A workspace and an all-scopes key made through the CLI on the given database. */
export async function cliTenant(env: Record<string, string>, scopes = 'all'): Promise<{ workspaceId: string; key: string; keyId: string }> {
  const workspace = await cliJson<{ id: string }>(env, 'workspace', 'create', '--name', 'Process test');
  const key = await cliJson<{ id: string; key: string }>(env, 'key', 'create', '--workspace', workspace.id, '--scopes', scopes);
  return { workspaceId: workspace.id, key: key.key, keyId: key.id };
}

/** Asks `probe` every 200 ms until `accept` takes its answer or `timeoutMs` pass; returns the last answer (the test asserts on it). */
export async function probeUntil<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

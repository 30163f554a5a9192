import { spawn } from 'node:child_process';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { SERVER_ENTRY } from '../helpers/processes.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Runs the server to its end and resolves with its exit code and what it wrote to stderr and stdout. */
function runServer(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER_ENTRY], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not exit on a busy port:\n${stdout}${stderr}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// A second copy of the service (or any program) on the port: one line saying so and what to do, exit code 1,
// no stack trace and no error object in the log.
describe('starting on a port already in use', () => {
  const env = freshDatabaseEnv();
  const blocker = net.createServer();
  afterAll(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    await dropDatabase(env);
  });

  it('prints one clear line and exits with code 1', async () => {
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    const run = await runServer({ ...env, PORT: String(port), HOST: '127.0.0.1' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `Port ${port} is already in use (another copy of the service or another program). Stop it, or start with PORT=${port + 1} npm start.`,
    );
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/EADDRINUSE|\n\s+at /);
  }, 90_000);
});

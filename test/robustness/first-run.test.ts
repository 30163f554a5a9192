import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../helpers/processes.js';

/** Waits (up to 10 s) until the server's output contains `text`. */
async function logged(server: ServerProcess, text: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!server.output().includes(text) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

// The server's first-run hint: logged on a database with no account and no API key, and not once someone
// has signed up in the dashboard (or made a key with the CLI).
describe('first-run hint in the server log', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-agent-first-run-'));
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'first-run.db')}`, LOG_LEVEL: 'info', REDIS_URL: '' };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('points a new user to the dashboard on a first run, and is quiet after the first sign-up', async () => {
    const first = await startServer(env);
    try {
      await logged(first, 'first run?');
      expect(first.output()).toContain(`first run? Open `);
      const signUp = await fetch(`${first.url}/app/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: first.url },
        body: JSON.stringify({ email: 'first@example.com', password: 'a long enough password', workspace_name: 'First' }),
      });
      expect(signUp.status).toBe(201);
    } finally {
      await first.stop();
    }

    const second = await startServer(env);
    try {
      await logged(second, 'serving the API at');
      expect(second.output()).toContain('serving the API at');
      expect(second.output()).not.toContain('first run?');
    } finally {
      await second.stop();
    }
  });
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';

// The SQLite file on a 20 MiB filesystem the test mounts (tmpfs; needs root). Filling it must answer 503
// storage_full with Retry-After and make /readyz 503; freeing space must bring writes back by themselves,
// with every acknowledged lead still there. SQLite only: the PostgreSQL run covers the database faults
// through its TCP proxies (test/multi-instance).

const isRoot = process.getuid?.() === 0;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
// Locally without root there is no small filesystem to make; under CI the test must run.
const runs = !onPostgres && (isRoot || process.env.CI === 'true');

describe.runIf(runs)('a full disk under the SQLite file', () => {
  let dir: string;
  let mounted = false;
  let server: ServerProcess;
  let tenant: { key: string };
  const filler = () => path.join(dir, 'filler');

  beforeAll(async () => {
    if (!isRoot) throw new Error('the disk-full test mounts a tmpfs and must run as root under CI');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'disk-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', dir]);
    mounted = true;
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'service.db')}`, REDIS_URL: '' };
    tenant = await cliTenant(env);
    server = await startServer(env);
  });

  afterAll(async () => {
    await server?.stop();
    if (mounted) execFileSync('umount', ['-l', dir]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const post = (email: string) =>
    fetch(`${server.url}/api/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      // A few KiB per lead, so the disk fills after a handful of writes.
      body: JSON.stringify({ email, custom_fields: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`note${i}`, 'x'.repeat(500)])) }),
    });

  /** Writes a filler file until the filesystem refuses (ENOSPC). */
  function fillDisk(): void {
    const fd = fs.openSync(filler(), 'a');
    try {
      for (const size of [1024 * 1024, 4096, 512]) {
        const chunk = Buffer.alloc(size, 1);
        for (;;) {
          try {
            if (fs.writeSync(fd, chunk) < size) break;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
            break;
          }
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  it('answers 503 storage_full with Retry-After and /readyz 503 while full, and recovers once space is freed', async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await post(`before${i}@example.com`);
      expect(response.status).toBe(201);
      acknowledged.push(`before${i}@example.com`);
    }

    fillDisk();
    // The WAL may still have room in its last pages: write until the disk refuses.
    let refused: Response | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const response = await post(`full${i}@example.com`);
      if (response.status === 201) acknowledged.push(`full${i}@example.com`);
      else refused = response;
    }
    expect(refused, 'some write was refused while the disk is full').toBeDefined();
    const problem = (await refused!.json()) as { code: string; status: number };
    expect(refused!.status).toBe(503);
    expect(refused!.headers.get('content-type')).toContain('application/problem+json');
    expect(problem.code).toBe('storage_full');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);

    const again = await post('still-full@example.com');
    expect(again.status).toBe(503);
    expect(((await again.json()) as { code: string }).code).toBe('storage_full');

    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(Number(ready.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.database).toBe('storage_full');

    // Reads still work while writes cannot.
    const list = await fetch(`${server.url}/api/v1/leads?limit=1`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(list.status).toBe(200);

    fs.rmSync(filler());
    // Recovery by itself: /readyz notices without any write having to succeed first.
    const readyAgain = await fetch(`${server.url}/readyz`);
    expect(readyAgain.status).toBe(200);
    const after = await post('after@example.com');
    expect(after.status).toBe(201);
    acknowledged.push('after@example.com');

    const emails: string[] = [];
    let next: string | null = `${server.url}/api/v1/leads?limit=100`;
    while (next) {
      const page = await fetch(next, { headers: { authorization: `Bearer ${tenant.key}` } });
      const body = (await page.json()) as { data: { email: string }[]; next_cursor?: string | null };
      emails.push(...body.data.map((lead) => lead.email));
      next = body.next_cursor ? `${server.url}/api/v1/leads?limit=100&cursor=${encodeURIComponent(body.next_cursor)}` : null;
    }
    expect(emails.sort()).toEqual([...acknowledged].sort());
  });
});

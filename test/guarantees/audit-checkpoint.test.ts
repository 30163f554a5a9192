import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/database.js';
import { makeChatbot, makeLead } from '../helpers/factories.js';
import { cli, cliJson, type CliRun } from '../helpers/processes.js';

const SIGNING_KEY = 'checkpoint-test-key-0123456789abcdef0123456789';
const OTHER_KEY = 'another-operators-key-0123456789abcdef01234567';

/** A signed checkpoint as `audit checkpoint --json` prints it. */
interface Checkpoint {
  workspace_id: string;
  seq: number;
  hash: string;
  created_at: string;
  signature: string;
  [field: string]: unknown;
}

/** A workspace with a chain of audit events made through the real app, and a CLI on its database. */
interface Chain {
  t: TestApp;
  workspaceId: string;
  /** The database as a CLI process sees it, with the signing key. */
  env: Record<string, string>;
  /** The chain as stored, oldest first. */
  events(): Promise<{ seq: number; hash: string }[]>;
  /** Appends `count` more events (new leads, through the API). */
  more(count: number): Promise<void>;
}

/**
 * Signed checkpoints kept outside the database (issue 29, point 8): someone who can write the database can
 * drop the append-only trigger, delete the newest events and roll the workspace's recorded chain head back,
 * and the chain alone still verifies. A checkpoint taken earlier (and kept elsewhere) catches it.
 */
describe('audit checkpoints: truncation is detected against a signed checkpoint', { timeout: 90_000 }, () => {
  const chains: Chain[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-checkpoint-'));

  afterAll(async () => {
    for (const chain of chains) await chain.t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh database with one workspace whose chain has a few events (made through the API). */
  async function freshChain(): Promise<Chain> {
    const t = await createTestApp({}, { replyWorker: false });
    const tenant = await t.tenant();
    const bot = await makeChatbot(tenant);
    await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
    for (let i = 0; i < 3; i++) await makeLead(tenant);
    const chain: Chain = {
      t,
      workspaceId: tenant.workspaceId,
      env: { ...t.databaseEnv, AUDIT_SIGNING_KEY: SIGNING_KEY },
      events: async () =>
        (
          await t.app.database.db
            .selectFrom('audit_events')
            .select(['seq', 'hash'])
            .where('workspace_id', '=', tenant.workspaceId)
            .orderBy('seq', 'asc')
            .execute()
        ).map((row) => ({ seq: Number(row.seq), hash: row.hash })),
      more: async (count) => {
        for (let i = 0; i < count; i++) await makeLead(tenant);
      },
    };
    chains.push(chain);
    return chain;
  }

  /** Takes a checkpoint through the CLI (it must succeed) and writes it to a file, as a cron job would. */
  async function checkpointFile(chain: Chain): Promise<{ file: string; checkpoint: Checkpoint }> {
    const checkpoint = await cliJson<Checkpoint>(chain.env, 'audit', 'checkpoint', '--workspace', chain.workspaceId);
    const file = path.join(dir, `checkpoint-${chains.indexOf(chain)}-${checkpoint.seq}-${Math.random().toString(36).slice(2, 8)}.json`);
    fs.writeFileSync(file, `${JSON.stringify(checkpoint)}\n`);
    return { file, checkpoint };
  }

  const verify = (chain: Chain, ...extra: string[]): Promise<CliRun> => cli(chain.env, 'audit', 'verify', '--workspace', chain.workspaceId, ...extra);

  /**
   * The review's tampering, by raw SQL behind the service's back: drop the append-only trigger(s), delete
   * every event after `keepSeq`, and roll the workspace's recorded chain head back to the event at `keepSeq`.
   */
  /** Drops the append-only trigger(s) of the audit table, as someone with direct database access can. */
  async function dropAppendOnlyTriggers(chain: Chain): Promise<void> {
    const db = chain.t.app.database.db;
    if (backend === 'sqlite') {
      await sql`drop trigger audit_events_no_update`.execute(db);
      await sql`drop trigger audit_events_no_delete`.execute(db);
    } else {
      await sql`drop trigger audit_events_append_only on audit_events`.execute(db);
    }
  }

  async function truncate(chain: Chain, keepSeq: number): Promise<void> {
    const db = chain.t.app.database.db;
    const kept = (await chain.events()).find((event) => event.seq === keepSeq)!;
    await dropAppendOnlyTriggers(chain);
    await sql`delete from audit_events where workspace_id = ${chain.workspaceId} and seq > ${keepSeq}`.execute(db);
    await sql`update workspaces set audit_seq = ${keepSeq}, audit_head = ${kept.hash} where id = ${chain.workspaceId}`.execute(db);
  }

  let sound: Chain;
  beforeAll(async () => {
    sound = await freshChain();
  });

  it('the review: after truncation with the head rolled back, plain verify still passes but verify --checkpoint fails', async () => {
    const chain = await freshChain();
    // The checkpoint is taken first; its exit code is asserted after plain verify has been shown blind.
    const taken = await cli(chain.env, 'audit', 'checkpoint', '--workspace', chain.workspaceId, '--json');
    await chain.more(2);
    const before = await chain.events();
    expect(before.length).toBeGreaterThanOrEqual(8);
    await truncate(chain, 3);
    expect((await chain.events()).map((e) => e.seq)).toEqual([1, 2, 3]);

    const plain = await verify(chain);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/intact: 3 events/);

    expect(taken.code, `audit checkpoint: ${taken.stderr}`).toBe(0);
    const checkpoint = JSON.parse(taken.stdout) as Checkpoint;
    expect(checkpoint.seq).toBe(before.length - 2);
    const file = path.join(dir, 'truncated.json');
    fs.writeFileSync(file, taken.stdout);
    const checked = await verify(chain, '--checkpoint', file);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain(`event #${checkpoint.seq}`);
    expect(checked.stderr).toMatch(/checkpoint/i);
    expect(checked.stderr).toMatch(/removed|missing|no longer/i);
  });

  it('one JSON object: the workspace, the newest event (seq and hash), the time and an HMAC-SHA256 signature', async () => {
    const { checkpoint } = await checkpointFile(sound);
    const events = await sound.events();
    const newest = events[events.length - 1]!;
    expect(checkpoint).toMatchObject({ workspace_id: sound.workspaceId, seq: newest.seq, hash: newest.hash });
    expect(Date.parse(checkpoint.created_at)).not.toBeNaN();
    expect(checkpoint.signature).toMatch(/^[0-9a-f]{64}$/);
    // The key is never stored in the database.
    const dump = JSON.stringify(await sound.t.app.database.db.selectFrom('workspaces').selectAll().execute());
    expect(dump).not.toContain(SIGNING_KEY);
  });

  it('without --json it prints one human line', async () => {
    const run = await cli(sound.env, 'audit', 'checkpoint', '--workspace', sound.workspaceId);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toContain(sound.workspaceId);
    expect(run.stdout).toMatch(/#\d+/);
  });

  it('a checkpoint still holds, with a clear line, after the chain has grown', async () => {
    const { file, checkpoint } = await checkpointFile(sound);
    await sound.more(2);
    const run = await verify(sound, '--checkpoint', file);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/intact/);
    expect(run.stdout).toContain(`#${checkpoint.seq}`);
    expect(run.stdout).toMatch(/checkpoint/i);
  });

  it('a tail rewritten with other events (head rolled back, new events chained on) fails on the hash', async () => {
    const chain = await freshChain();
    const { file, checkpoint } = await checkpointFile(chain);
    await truncate(chain, 2);
    await chain.more(checkpoint.seq); // the chain is longer again, but its events are not the same ones
    expect((await chain.events()).length).toBeGreaterThan(checkpoint.seq);
    expect((await verify(chain)).code).toBe(0);
    const run = await verify(chain, '--checkpoint', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`event #${checkpoint.seq}`);
    expect(run.stderr).toMatch(/hash/);
  });

  it('a broken chain gets no checkpoint', async () => {
    const chain = await freshChain();
    await dropAppendOnlyTriggers(chain);
    await sql`delete from audit_events where workspace_id = ${chain.workspaceId} and seq = 2`.execute(chain.t.app.database.db);
    const run = await cli(chain.env, 'audit', 'checkpoint', '--workspace', chain.workspaceId, '--json');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no checkpoint: .* BROKEN at event #3/);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, seq: 3 });
  });

  it('a forged signature fails', async () => {
    const { file, checkpoint } = await checkpointFile(sound);
    const last = checkpoint.signature.at(-1) === '0' ? '1' : '0';
    fs.writeFileSync(file, JSON.stringify({ ...checkpoint, signature: checkpoint.signature.slice(0, -1) + last }));
    const run = await verify(sound, '--checkpoint', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/signature does not verify/);
  });

  it('a changed field under the original signature fails', async () => {
    const { file, checkpoint } = await checkpointFile(sound);
    fs.writeFileSync(file, JSON.stringify({ ...checkpoint, seq: 1, hash: (await sound.events())[0]!.hash }));
    const run = await verify(sound, '--checkpoint', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/signature does not verify/);
  });

  it('a checkpoint verified with another key fails', async () => {
    const { file } = await checkpointFile(sound);
    const run = await cli({ ...sound.env, AUDIT_SIGNING_KEY: OTHER_KEY }, 'audit', 'verify', '--workspace', sound.workspaceId, '--checkpoint', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/signature does not verify/);
  });

  it("another workspace's checkpoint fails", async () => {
    const { file } = await checkpointFile(sound);
    const other = await sound.t.tenant();
    const run = await cli(sound.env, 'audit', 'verify', '--workspace', other.workspaceId, '--checkpoint', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(sound.workspaceId);
  });

  it('a missing or too short AUDIT_SIGNING_KEY is a clear error with a non-zero exit', async () => {
    const { file } = await checkpointFile(sound);
    const { AUDIT_SIGNING_KEY: _key, ...withoutKey } = sound.env;
    for (const env of [withoutKey, { ...withoutKey, AUDIT_SIGNING_KEY: '' }]) {
      const taken = await cli(env, 'audit', 'checkpoint', '--workspace', sound.workspaceId, '--json');
      expect(taken.code).not.toBe(0);
      expect(taken.stderr).toMatch(/AUDIT_SIGNING_KEY is not set/);
      expect(taken.stdout).toBe('');
      const checked = await cli(env, 'audit', 'verify', '--workspace', sound.workspaceId, '--checkpoint', file);
      expect(checked.code).not.toBe(0);
      expect(checked.stderr).toMatch(/AUDIT_SIGNING_KEY is not set/);
    }
    const short = await cli({ ...sound.env, AUDIT_SIGNING_KEY: 'short' }, 'audit', 'checkpoint', '--workspace', sound.workspaceId);
    expect(short.code).not.toBe(0);
    expect(short.stderr).toMatch(/AUDIT_SIGNING_KEY must be at least 32 characters/);
  });

  it('an unreadable or malformed checkpoint file is a clear error', async () => {
    const missing = await verify(sound, '--checkpoint', path.join(dir, 'nowhere.json'));
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/cannot read checkpoint/);
    const file = path.join(dir, 'malformed.json');
    fs.writeFileSync(file, '{"workspace_id": 1}');
    const malformed = await verify(sound, '--checkpoint', file);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toMatch(/not a checkpoint/);
  });
});

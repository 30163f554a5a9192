import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrations } from '../../src/db/migrations/index.js';
import { SCOPES } from '../../src/http/scopes.js';
import { isWellFormedApiKey } from '../../src/lib/api-key-format.js';
import { cli as runCli } from '../helpers/processes.js';
import { expectProblem, PREFIX, send } from './support.js';

// The ops CLI as a child process (`node dist/cli.js …`) on a temp SQLite file, checked against a real
// app built on the same file.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-agent-cli-'));
const DB_FILE = path.join(dir, 'cli.db');
let app: FastifyInstance;
/** Each CLI run starts a process: seconds each on a busy machine. */
const SLOW = 120_000;

/** The shared CLI runner on this suite's SQLite file (or another one). */
const cli = (args: string[], dbFile = DB_FILE) => runCli({ DATABASE_URL: `sqlite:${dbFile}` }, ...args);

/** Runs a command that must succeed with --json, and returns the one JSON value it printed. */
async function cliJson<T = Record<string, unknown>>(args: string[], dbFile = DB_FILE): Promise<T> {
  const run = await cli([...args, '--json'], dbFile);
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.split('\n').filter((line) => line.trim() !== '');
  expect(lines, run.stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

beforeAll(async () => {
  app = await buildApp(loadConfig({ DATABASE_URL: `sqlite:${DB_FILE}`, LOG_LEVEL: 'silent' }));
  await app.ready();
});
afterAll(async () => {
  await app.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let workspaceId: string;
let allKey: { id: string; key: string; scopes: string[] };

describe('workspaces and keys', { timeout: SLOW }, () => {
  it('workspace create --name NAME --json prints exactly {id: ws_…, name}', async () => {
    const out = await cliJson(['workspace', 'create', '--name', 'Acme Dental']);
    expect(Object.keys(out).sort()).toEqual(['id', 'name']);
    expect(out.id).toMatch(PREFIX.workspace);
    expect(out.name).toBe('Acme Dental');
    workspaceId = out.id as string;
  });

  it('key create with two scopes prints {id: key_…, key: wsk_…, scopes}, and the key works for exactly those scopes', async () => {
    const out = await cliJson<{ id: string; key: string; scopes: string[] }>([
      'key', 'create', '--workspace', workspaceId, '--scopes', 'leads:read,leads:write', '--name', 'crm sync',
    ]);
    expect(out.id).toMatch(PREFIX.apiKey);
    expect(out.key).toMatch(/^wsk_/);
    expect(isWellFormedApiKey(out.key)).toBe(true);
    expect([...out.scopes].sort()).toEqual(['leads:read', 'leads:write']);
    expect((await send(app, out.key, 'GET', '/api/v1/leads')).statusCode).toBe(200);
    expect((await send(app, out.key, 'POST', '/api/v1/leads', { email: 'cli@example.com' })).statusCode).toBe(201);
    expectProblem(await send(app, out.key, 'GET', '/api/v1/chatbots'), 403, 'insufficient_scope');
  });

  it('--scopes all grants all 10 scopes, and the key works for GET /api/v1/chatbots', async () => {
    allKey = await cliJson(['key', 'create', '--workspace', workspaceId, '--scopes', 'all']);
    expect([...allKey.scopes].sort()).toEqual([...SCOPES].sort());
    expect(allKey.scopes).toHaveLength(10);
    const response = await send(app, allKey.key, 'GET', '/api/v1/chatbots');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
  });

  it('--expires-in-days sets an expiry that many days ahead', async () => {
    const before = Date.now();
    const out = await cliJson<{ expires_at: string }>(['key', 'create', '--workspace', workspaceId, '--scopes', 'analytics:read', '--expires-in-days', '30']);
    const after = Date.now();
    const expires = Date.parse(out.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expires).toBeLessThanOrEqual(after + 30 * 86_400_000);
  });

  it('key list --json lists the keys without any secret', async () => {
    const keys = await cliJson<Record<string, unknown>[]>(['key', 'list', '--workspace', workspaceId]);
    expect(Array.isArray(keys)).toBe(true);
    expect(keys.length).toBe(3);
    expect(keys.map((k) => k.id)).toContain(allKey.id);
    const text = JSON.stringify(keys);
    expect(text).not.toContain(allKey.key);
    expect(text).not.toContain(allKey.key.slice(4, 20));
    for (const key of keys) {
      expect(key).not.toHaveProperty('key');
      expect(key).not.toHaveProperty('secret');
      expect(key).not.toHaveProperty('secret_hash');
    }
  });

  it('key revoke KEY_ID revokes the key: the app refuses it on the next request', async () => {
    const victim = await cliJson<{ id: string; key: string }>(['key', 'create', '--workspace', workspaceId, '--scopes', 'chatbots:read']);
    expect((await send(app, victim.key, 'GET', '/api/v1/chatbots')).statusCode).toBe(200);
    const revoked = await cliJson<{ id: string; revoked_at: string | null }>(['key', 'revoke', victim.id]);
    expect(revoked.id).toBe(victim.id);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    const response = await send(app, victim.key, 'GET', '/api/v1/chatbots');
    expectProblem(response, 401, 'invalid_api_key');
    expect(String(response.headers['www-authenticate'])).toContain('error="invalid_token"');
    // the other keys are untouched
    expect((await send(app, allKey.key, 'GET', '/api/v1/chatbots')).statusCode).toBe(200);
    const listed = await cliJson<{ id: string; revoked_at: string | null }[]>(['key', 'list', '--workspace', workspaceId]);
    expect(listed.find((k) => k.id === victim.id)?.revoked_at).toEqual(expect.any(String));
    expect(listed.find((k) => k.id === allKey.id)?.revoked_at).toBeNull();
  });
});

describe('demo seed', { timeout: SLOW }, () => {
  it('seeds agents in several states, >= 20 conversations with every message role, and leads', async () => {
    const seeded = await cliJson<{ chatbots: string[]; conversations: string[]; leads: string[] }>(['demo', 'seed', '--workspace', workspaceId]);
    expect(seeded.chatbots.length).toBeGreaterThanOrEqual(3);
    expect(seeded.conversations.length).toBeGreaterThanOrEqual(20);
    expect(seeded.leads.length).toBeGreaterThan(0);
    for (const id of seeded.chatbots) expect(id).toMatch(PREFIX.chatbot);
    for (const id of seeded.conversations) expect(id).toMatch(PREFIX.conversation);
    for (const id of seeded.leads) expect(id).toMatch(PREFIX.lead);

    const api = (url: string) => send(app, allKey.key, 'GET', url);
    const bots = (await api('/api/v1/chatbots?limit=100')).json().data as { id: string; status: string }[];
    expect(bots.map((b) => b.id).sort()).toEqual([...seeded.chatbots].sort());
    expect(new Set(bots.map((b) => b.status)).size).toBeGreaterThanOrEqual(3);
    expect(bots.map((b) => b.status)).toEqual(expect.arrayContaining(['draft', 'active', 'paused']));

    const conversations = (await api('/api/v1/conversations?limit=100')).json().data as { id: string; status: string }[];
    expect(conversations.map((c) => c.id).sort()).toEqual([...seeded.conversations].sort());
    expect(new Set(conversations.map((c) => c.status))).toEqual(new Set(['open', 'closed']));

    const roles = new Set<string>();
    for (const id of seeded.conversations) {
      const messages = (await api(`/api/v1/conversations/${id}/messages?limit=100`)).json().data as { role: string }[];
      for (const m of messages) roles.add(m.role);
    }
    expect([...roles].sort()).toEqual(['assistant', 'operator', 'user']);

    const leads = (await api('/api/v1/leads?limit=100')).json().data as { id: string }[];
    for (const id of seeded.leads) expect(leads.map((l) => l.id)).toContain(id);

    const analytics = (await api('/api/v1/analytics')).json();
    expect(analytics.conversations.total).toBeGreaterThan(0);
    expect(analytics.messages.user).toBeGreaterThan(0);
    expect(analytics.messages.assistant).toBeGreaterThan(0);
    expect(analytics.messages.operator).toBeGreaterThan(0);
  });
});

describe('migrate', { timeout: SLOW }, () => {
  it('applies every migration to a fresh database, then reports it up to date', async () => {
    const fresh = path.join(dir, 'fresh.db');
    const first = await cliJson<{ status: string; applied: string[] }>(['migrate'], fresh);
    expect(first).toEqual({ status: 'up_to_date', applied: Object.keys(migrations) });
    const again = await cliJson<{ status: string; applied: string[] }>(['migrate'], fresh);
    expect(again).toEqual({ status: 'up_to_date', applied: [] });
  });
});

describe('wrong arguments exit non-zero with a message on stderr and nothing on stdout', { timeout: SLOW }, () => {
  const cases: [string, () => string[], RegExp][] = [
    ['an unknown command', () => ['frobnicate', '--json'], /unknown command/i],
    ['an unknown subcommand', () => ['workspace', 'delete', '--json'], /unknown command/i],
    ['a missing --name', () => ['workspace', 'create', '--json'], /--name/],
    ['an empty --name', () => ['workspace', 'create', '--name', '  ', '--json'], /--name/],
    ['an unknown option', () => ['workspace', 'create', '--name', 'X', '--colour', 'red', '--json'], /colour/],
    ['a missing --workspace', () => ['key', 'create', '--scopes', 'all', '--json'], /--workspace/],
    ['a missing --scopes', () => ['key', 'create', '--workspace', workspaceId, '--json'], /--scopes/],
    ['an unknown scope', () => ['key', 'create', '--workspace', workspaceId, '--scopes', 'leads:read,leads:delete', '--json'], /leads:delete/],
    ['--expires-in-days 0', () => ['key', 'create', '--workspace', workspaceId, '--scopes', 'all', '--expires-in-days', '0', '--json'], /expires-in-days/],
    ['--expires-in-days abc', () => ['key', 'create', '--workspace', workspaceId, '--scopes', 'all', '--expires-in-days', 'abc', '--json'], /expires-in-days/],
    ['--expires-in-days 1.5', () => ['key', 'create', '--workspace', workspaceId, '--scopes', 'all', '--expires-in-days', '1.5', '--json'], /expires-in-days/],
    ['an unknown workspace', () => ['key', 'create', '--workspace', 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--scopes', 'all', '--json'], /ws_01ARZ3NDEKTSV4RRFFQ69G5FAV|workspace/i],
    ['a malformed workspace id', () => ['demo', 'seed', '--workspace', 'acme', '--json'], /workspace/i],
    ['an unknown key to revoke', () => ['key', 'revoke', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--json'], /key_01ARZ3NDEKTSV4RRFFQ69G5FAV/],
    ['revoke without a key id', () => ['key', 'revoke', '--json'], /argument|usage/i],
  ];

  it.each(cases)('%s', async (_label, args, message) => {
    const run = await cli(args());
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  });

  it('usage mistakes exit with code 2 and print the usage', async () => {
    const run = await cli(['workspace', 'create', '--json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/usage/i);
  });

});

describe('after the wrong arguments', { timeout: SLOW }, () => {
  it('nothing was written: no key was created', async () => {
    const keys = await cliJson<{ id: string }[]>(['key', 'list', '--workspace', workspaceId]);
    expect(keys).toHaveLength(4);
  });
});

import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { prepareDatabase } from '../db/database.js';
import { ConfigError, type Config } from '../config.js';
import { SCOPES } from '../http/scopes.js';
import { systemContext } from '../lib/actor.js';
import { systemClock } from '../lib/clock.js';
import { parseCheckpoint, type AuditCheckpoint } from '../modules/audit/checkpoint.js';
import { seedDemo } from '../modules/demo/seed.js';
import { createServices, type Services } from '../services.js';
import { userCommands } from './user-commands.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** A mistake in how the CLI was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A command that ran but found a problem (a broken audit chain): exit code 1, details kept for --json. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
  constructor(
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

/** What a command produced: a JSON value for --json, and the text shown otherwise (or it streamed itself). */
export interface CommandOutput {
  json: unknown;
  text: string;
  streamed?: boolean;
  count?: number;
}

/** Writes a chunk to stdout, waiting when the pipe is full. */
export type Writer = (chunk: string) => Promise<void>;

interface CommandEnv {
  config: Config;
  db: Kysely<Database>;
  services: Services;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** One CLI command: its usage line, its options and what it does. */
export interface Command {
  usage: string;
  options: Options;
  positionals?: number;
  run(env: CommandEnv, values: Record<string, string | boolean | undefined>, positionals: string[], write: Writer): Promise<CommandOutput>;
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

const json = { json: { type: 'boolean' as const } };

/** The audit signing key, or a clear error: checkpoints cannot be signed or checked without it. */
function signingKey(config: Config): string {
  if (config.audit.signingKey === null) {
    throw new ConfigError('AUDIT_SIGNING_KEY is not set: audit checkpoints are signed and checked with it (a secret of at least 32 characters kept outside the database, e.g. `openssl rand -hex 32`)');
  }
  return config.audit.signingKey;
}

/** Reads a checkpoint file written from `audit checkpoint --json`. */
async function readCheckpoint(file: string): Promise<AuditCheckpoint> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CommandFailure(`cannot read checkpoint ${file}: ${(error as Error).message}`, { reason: 'unreadable_checkpoint', file });
  }
  const checkpoint = parseCheckpoint(text);
  if (!checkpoint) {
    throw new CommandFailure(`${file} is not a checkpoint: expected the one JSON object that \`audit checkpoint --json\` prints`, { reason: 'malformed_checkpoint', file });
  }
  return checkpoint;
}

const COMMANDS: Record<string, Command> = {
  'workspace create': {
    usage: 'workspace create --name NAME [--json]',
    options: { name: { type: 'string' }, ...json },
    async run({ services }, values) {
      const workspace = await services.workspaces.create(required(values, 'name'));
      return { json: { id: workspace.id, name: workspace.name }, text: `created workspace ${workspace.id} (${workspace.name})` };
    },
  },
  'key create': {
    usage: `key create --workspace WS_ID --scopes SCOPE[,SCOPE…]|all [--name NAME] [--expires-in-days DAYS] [--json]\n    scopes: ${SCOPES.join(', ')}`,
    options: { workspace: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'expires-in-days': { type: 'string' }, ...json },
    async run({ services }, values) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      const raw = required(values, 'scopes');
      const scopes = raw.trim() === 'all' ? [...SCOPES] : raw.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown.length) throw new UsageError(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')}, or "all")`);
      const daysText = values['expires-in-days'];
      const days = typeof daysText === 'string' ? Number(daysText) : undefined;
      if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 3650)) {
        throw new UsageError('--expires-in-days must be a whole number from 1 to 3650');
      }
      const name = typeof values.name === 'string' ? values.name : 'CLI key';
      const { key, secret } = await services.apiKeys.create(systemContext(workspace.id), { name, scopes, expiresInDays: days ?? null });
      return {
        json: { id: key.id, key: secret, name: key.name, workspace_id: workspace.id, scopes: key.scopes, expires_at: key.expires_at },
        text: `created key ${key.id} (${key.scopes.join(', ')})\n\n  ${secret}\n\nThis secret is shown once; store it now. Use it as: Authorization: Bearer ${secret.slice(0, 8)}…`,
      };
    },
  },
  'key list': {
    usage: 'key list --workspace WS_ID [--json]',
    options: { workspace: { type: 'string' }, ...json },
    async run({ services }, values) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      const keys = await services.apiKeys.list(systemContext(workspace.id));
      const lines = keys.map((k) => `${k.id}  ${k.prefix}…  ${k.name}  [${k.scopes.join(',')}]${k.revoked_at ? '  revoked' : ''}${k.expires_at ? `  expires ${k.expires_at}` : ''}`);
      return { json: keys, text: lines.length ? lines.join('\n') : 'no keys' };
    },
  },
  'key revoke': {
    usage: 'key revoke KEY_ID [--json]',
    options: { ...json },
    positionals: 1,
    async run({ services }, _values, positionals) {
      const id = positionals[0]!;
      const found = await services.apiKeys.findAnywhere(id);
      if (!found) throw new UsageError(`no API key with id "${id}"`);
      const key = await services.apiKeys.revoke(systemContext(found.workspace_id), id);
      return { json: key, text: `revoked key ${key.id} at ${key.revoked_at}` };
    },
  },
  'demo seed': {
    usage: 'demo seed --workspace WS_ID [--json]',
    options: { workspace: { type: 'string' }, ...json },
    async run({ db, services }, values) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      const result = await seedDemo(db, systemClock, workspace.id);
      return {
        json: result,
        text: `seeded ${result.chatbots.length} AI Agents, ${result.conversations.length} conversations and ${result.leads.length} leads in ${workspace.id}`,
      };
    },
  },
  'audit list': {
    usage: 'audit list --workspace WS_ID [--limit N] [--json]',
    options: { workspace: { type: 'string' }, limit: { type: 'string' }, ...json },
    async run({ services }, values) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      const limitText = values.limit;
      const limit = typeof limitText === 'string' ? Number(limitText) : 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw new UsageError('--limit must be a whole number from 1 to 100000');
      const events = await services.audit.list(workspace.id, limit);
      const lines = events.map((e) => `${e.occurred_at}  ${e.action.padEnd(22)} ${e.actor.type}:${e.actor.id} (${e.actor.name}) → ${e.target.type}:${e.target.id}`);
      return { json: events, text: lines.length ? lines.join('\n') : 'no audit events' };
    },
  },
  'audit verify': {
    usage: 'audit verify --workspace WS_ID [--checkpoint FILE] [--json]\n    with --checkpoint: also that the chain still holds the signed checkpoint in FILE (needs AUDIT_SIGNING_KEY)',
    options: { workspace: { type: 'string' }, checkpoint: { type: 'string' }, ...json },
    async run({ config, services }, values) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      if (values.checkpoint !== undefined) {
        const file = required(values, 'checkpoint');
        const key = signingKey(config);
        const result = await services.audit.verifyCheckpoint(workspace.id, await readCheckpoint(file), key);
        if (!result.ok) throw new CommandFailure(`audit chain of ${workspace.id} FAILS checkpoint ${file}: ${result.reason}`, result);
        const { seq, hash, created_at } = result.checkpoint;
        return {
          json: result,
          text: `audit chain of ${workspace.id} is intact: ${result.events} events, head ${result.head.slice(0, 16)}…; it holds the checkpoint of ${created_at} (event #${seq}, hash ${hash.slice(0, 16)}…)`,
        };
      }
      const result = await services.audit.verify(workspace.id);
      if (!result.ok) {
        const where = result.eventId ? `event ${result.eventId} (#${result.seq})` : `after event #${result.seq - 1}`;
        throw new CommandFailure(`audit chain of ${workspace.id} is BROKEN at ${where}: ${result.reason}`, result);
      }
      return { json: result, text: `audit chain of ${workspace.id} is intact: ${result.events} events, head ${result.head.slice(0, 16)}…` };
    },
  },
  'audit checkpoint': {
    usage: 'audit checkpoint --workspace WS_ID [--json]   (signs the newest event with AUDIT_SIGNING_KEY; keep the JSON elsewhere)',
    options: { workspace: { type: 'string' }, ...json },
    async run({ config, services }, values) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      const result = await services.audit.checkpoint(workspace.id, signingKey(config));
      if (!result.ok) throw new CommandFailure(`no checkpoint: the audit chain of ${workspace.id} is BROKEN at event #${result.seq}: ${result.reason}`, result);
      const { checkpoint } = result;
      return {
        json: checkpoint,
        text: `checkpoint of ${workspace.id} at event #${checkpoint.seq} (hash ${checkpoint.hash.slice(0, 16)}…), signed ${checkpoint.created_at}; take it with --json and keep it outside this database`,
      };
    },
  },
  'audit export': {
    usage: 'audit export --workspace WS_ID   (JSON Lines on stdout, oldest first)',
    options: { workspace: { type: 'string' }, ...json },
    async run({ services }, values, _positionals, write) {
      const workspace = await services.workspaces.get(required(values, 'workspace'));
      let count = 0;
      for await (const event of services.audit.export(workspace.id)) {
        await write(`${JSON.stringify(event)}\n`);
        count += 1;
      }
      return { json: undefined, text: '', streamed: true, count };
    },
  },
  ...userCommands,
  migrate: {
    usage: 'migrate [--json]',
    options: { ...json },
    async run() {
      // Migrations already ran when the database was opened; report that it is current.
      return { json: { status: 'up_to_date' }, text: 'database is up to date' };
    },
  },
};

/** The usage text of every command. */
export function usage(): string {
  return ['usage: npm run --silent cli -- <command>', '', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

/** Parses argv, runs the command against the configured database, and returns its output. */
export async function runCommand(config: Config, argv: string[], write: Writer): Promise<{ output: CommandOutput; asJson: boolean }> {
  const name = [argv[0], argv[1]].filter(Boolean).join(' ');
  const key = COMMANDS[name] ? name : COMMANDS[argv[0] ?? ''] ? argv[0]! : undefined;
  if (!key) throw new UsageError(argv.length ? `unknown command "${argv.join(' ')}"` : 'no command given');
  const command = COMMANDS[key]!;
  const rest = argv.slice(key.split(' ').length);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n  usage: ${command.usage}`);
  }
  if (parsed.positionals.length !== (command.positionals ?? 0)) {
    throw new UsageError(`wrong number of arguments\n  usage: ${command.usage}`);
  }
  const { handle: database, applied } = await prepareDatabase(config.database);
  try {
    const services = createServices({ db: database.db, clock: systemClock });
    const output = await command.run({ config, db: database.db, services }, parsed.values as Record<string, string | boolean | undefined>, parsed.positionals, write);
    if (key === 'migrate') output.json = { status: 'up_to_date', applied };
    if (key === 'migrate') output.text = applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date';
    return { output, asJson: parsed.values.json === true };
  } finally {
    await database.close();
  }
}

import { EventEmitter } from 'node:events';
import { sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { GroupCommit } from './sqlite-group-commit.js';
import type { Database } from './schema.js';

/**
 * Tells the live streams, once a transaction has committed, that a workspace's event log grew. The signal
 * carries only the workspace id: listeners read what is new from the log itself, so a signal lost or
 * doubled costs a late or an idle read, never an event.
 */
export interface CommitSignals {
  /** In `trx`: the workspace's event log grew. Heard once `trx` commits; never for a rolled-back one. */
  signal(trx: Transaction<Database>, workspaceId: string): Promise<void>;
  /**
   * Hears every committed signal (on PostgreSQL, of every instance). `null`: signals may have been missed
   * (the listening connection was lost and is back), so every workspace should be read again.
   */
  listen(listener: (workspaceId: string | null) => void): () => void;
  close(): Promise<void>;
}

const EVENT = 'signal';

function fanOut(): { emitter: EventEmitter; listen: CommitSignals['listen'] } {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    emitter,
    listen(listener) {
      emitter.on(EVENT, listener);
      return () => emitter.off(EVENT, listener);
    },
  };
}

/**
 * SQLite: one process writes, so the signal stays in it, raised when the group of writes holding the
 * transaction commits (src/db/sqlite-group-commit.ts).
 */
export function sqliteCommitSignals(writes: GroupCommit): CommitSignals {
  const { emitter, listen } = fanOut();
  return {
    async signal(_trx, workspaceId) {
      writes.afterCommit(() => emitter.emit(EVENT, workspaceId));
    },
    listen,
    async close() {
      emitter.removeAllListeners();
    },
  };
}

/** The PostgreSQL channel the instances signal on. */
export const SIGNAL_CHANNEL = 'chat_agent_events';

/** How long a lost listening connection waits before connecting again (doubling up to the maximum). */
const RECONNECT_MS = { first: 250, max: 10_000 };

/**
 * PostgreSQL: `pg_notify` in the transaction, which PostgreSQL delivers only when it commits (in commit
 * order, to every instance that LISTENs) and drops when it rolls back: no after-commit hook to miss, and no
 * second service to run. Each instance holds one listening connection, opened with the first listener and
 * opened again when lost; once back, it tells listeners to read everything again (`null`).
 */
export function postgresCommitSignals(connectionString: string, onError: (error: unknown) => void = () => undefined): CommitSignals {
  const { emitter, listen } = fanOut();
  let client: pg.Client | null = null;
  let closed = false;
  let delay = RECONNECT_MS.first;
  let timer: NodeJS.Timeout | null = null;

  async function connect(): Promise<void> {
    if (closed || client) return;
    const next = new pg.Client({ connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === SIGNAL_CHANNEL && message.payload) emitter.emit(EVENT, message.payload);
    });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next, null));
    try {
      await next.connect();
      await next.query(`listen ${SIGNAL_CHANNEL}`);
      delay = RECONNECT_MS.first;
      // Whatever committed while no connection listened is read now.
      emitter.emit(EVENT, null);
    } catch (error) {
      lost(next, error);
    }
  }

  function lost(which: pg.Client, error: unknown): void {
    if (client !== which) return;
    client = null;
    which.end().catch(() => undefined);
    if (closed) return;
    if (error) onError(error);
    timer = setTimeout(() => void connect(), delay);
    timer.unref();
    delay = Math.min(delay * 2, RECONNECT_MS.max);
  }

  return {
    async signal(trx, workspaceId) {
      await sql`select pg_notify(${SIGNAL_CHANNEL}, ${workspaceId})`.execute(trx);
    },
    listen(listener) {
      const stop = listen(listener);
      void connect();
      return stop;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      emitter.removeAllListeners();
      const open = client;
      client = null;
      await open?.end().catch(() => undefined);
    },
  };
}

import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import { GroupCommit, Mutex, RolledBackByDatabase, type GroupLimits, type Member } from './sqlite-group-commit.js';

const STATEMENT_CACHE_SIZE = 500;
/** Free space on the database's filesystem that counts as room for writes again after SQLITE_FULL. */
const STORAGE_ROOM_BYTES = 1024 * 1024;

type RowBuilder = (values: unknown[]) => Record<string, unknown>;

/**
 * A prepared statement, and for statements that return rows, the function that turns one row's values
 * into an object. Rows are fetched as arrays (better-sqlite3's raw mode) and built by a function compiled
 * for the statement's columns: better-sqlite3's own row objects intern every column name again for every
 * row and grow each object one property at a time, which took 40 % of a 21-row page read.
 */
interface Prepared {
  statement: SQLite.Statement;
  toRow: RowBuilder | null;
}

function rowBuilder(statement: SQLite.Statement): RowBuilder {
  const names = statement.columns().map((column) => column.name);
  if (names.includes('__proto__')) {
    // In an object literal that key would set the prototype: build such rare rows property by property.
    return (values) => Object.fromEntries(names.map((name, index) => [name, values[index]]));
  }
  // Later columns of the same name win, as in better-sqlite3's objects. Names are quoted with JSON.stringify.
  const fields = names.map((name, index) => `${JSON.stringify(name)}: values[${index}]`);
  return new Function('values', `return { ${fields.join(', ')} };`) as RowBuilder;
}

function rowsOf({ statement, toRow }: Prepared, parameters: readonly unknown[]): unknown[] {
  if (!toRow) throw new Error('this statement returns no rows');
  return (statement.all(parameters) as unknown[][]).map(toRow);
}

/**
 * One better-sqlite3 connection with its prepared statements kept (LRU). Queries are a small set of
 * shapes, and preparing a statement costs as much as running it. Sharing one is safe: better-sqlite3 runs
 * each statement to completion synchronously.
 */
class CachedConnection {
  private readonly cache = new Map<string, Prepared>();

  constructor(readonly raw: SQLite.Database) {}

  private prepared(text: string): Prepared {
    let prepared = this.cache.get(text);
    if (prepared) {
      this.cache.delete(text);
    } else {
      const statement = this.raw.prepare(text);
      prepared = { statement, toRow: statement.reader ? rowBuilder(statement.raw(true)) : null };
      if (this.cache.size >= STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(text, prepared);
    return prepared;
  }

  run(text: string, parameters: readonly unknown[]): QueryResult<unknown> {
    const prepared = this.prepared(text);
    if (prepared.toRow) return { rows: rowsOf(prepared, parameters) };
    const { statement } = prepared;
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}

/**
 * The SQLite connections of the service: one writer, which runs every transaction and write one at a time,
 * and, for a database file, one reader for the reads made outside a transaction. In WAL mode the reader
 * sees every committed write at once and never an uncommitted one, and it is never blocked by a
 * transaction that a request holds open on the writer (an idempotent POST keeps one open while its
 * handler runs). An in-memory database has no second connection: its reads wait for the writer.
 */
export class SqliteConnections {
  readonly writer: CachedConnection;
  readonly reader: CachedConnection | null;
  /** Every use of the writer goes through here: one at a time, committed in groups. */
  readonly writes: GroupCommit;
  /**
   * The code of the last write that failed since the last successful commit, or null: an error about a
   * transaction that SQLite rolled back by itself carries it, so the client learns why (SQLITE_FULL).
   */
  lastWriteFailure: string | null = null;
  /** A write failed for lack of space, and the filesystem has not had room since (see `storageFull`). */
  private outOfSpace = false;
  private readonly dataVersionStatement: SQLite.Statement;

  /** `groupLimits`: how large and how old a group of writes may grow (the defaults, unless a test pins them). */
  constructor(
    private readonly file: string,
    groupLimits?: GroupLimits,
  ) {
    const inMemory = file === ':memory:';
    if (!inMemory) fs.mkdirSync(path.dirname(file), { recursive: true });
    this.writer = new CachedConnection(configure(new SQLite(file)));
    // The reader opens after the writer has switched the file to WAL; query_only makes it refuse writes.
    this.reader = inMemory ? null : new CachedConnection(configure(new SQLite(file)));
    this.reader?.raw.pragma('query_only = ON');
    this.dataVersionStatement = this.writer.raw.prepare('pragma data_version').pluck();
    const writer = this.writer;
    const connections = this; // eslint-disable-line @typescript-eslint/no-this-alias -- read by the getter below
    this.writes = new GroupCommit(
      {
        run: (text) => void this.write(() => writer.run(text, []), text === 'commit'),
        get inTransaction() { return writer.raw.inTransaction; },
        get lastFailureCode() { return connections.lastWriteFailure; },
      },
      new Mutex(),
      groupLimits,
    );
  }

  /** Runs a statement on the writer, remembering why it failed, or that a commit succeeded. */
  write<T>(statement: () => T, commits = false): T {
    let result: T;
    try {
      result = statement();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT')) this.lastWriteFailure = code;
      if (code === 'SQLITE_FULL') this.outOfSpace = true;
      throw error;
    }
    if (commits) this.lastWriteFailure = null;
    return result;
  }

  /**
   * Whether writes fail for lack of space: one failed with SQLITE_FULL and the file's filesystem has had
   * less than STORAGE_ROOM_BYTES free ever since. Asked of the filesystem, not of a write: a full disk
   * leaves reads working, a commit that changed nothing succeeds, and a one-page probe write fits in what
   * a failed larger write left behind.
   */
  async storageFull(): Promise<boolean> {
    if (!this.outOfSpace) return false;
    const { bavail, bsize } = await fs.promises.statfs(path.dirname(this.file));
    if (bavail * bsize >= STORAGE_ROOM_BYTES) this.outOfSpace = false;
    return this.outOfSpace;
  }

  /** The data_version read in this turn of the event loop, until the turn ends. */
  private turnDataVersion: number | null = null;
  private readonly endTurn = () => {
    this.turnDataVersion = null;
  };

  /**
   * SQLite's data_version on the writer: it changes when another connection (another process on the same
   * file, such as the CLI) commits, and never for this process's own writes. Read once per event-loop turn:
   * the pragma takes the WAL's read lock (about 20 µs here, a tenth of a cached GET /chatbots/{id}), and a
   * request whose bytes arrive after another process's commit is read in a later turn, so it sees the commit.
   */
  dataVersion(): number {
    if (this.turnDataVersion === null) {
      this.turnDataVersion = this.dataVersionStatement.get() as number;
      setImmediate(this.endTurn);
    }
    return this.turnDataVersion;
  }

  close(): void {
    this.reader?.raw.close();
    this.writer.raw.close();
  }
}

function configure(connection: SQLite.Database): SQLite.Database {
  // WAL lets readers run beside the single writer; NORMAL sync in WAL mode survives a killed process
  // (only an OS crash or power loss can drop the last commits); foreign keys are off by default in SQLite.
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  // Savepoints (group commit, src/db/sqlite-group-commit.ts) keep the original of each page they change in
  // a statement journal: in memory rather than a temporary file (the journal of a savepoint is one request's
  // pages). The WAL is copied back into the database every 10,000 pages (about 40 MB) instead of SQLite's
  // 1,000: each checkpoint writes every distinct page once and syncs twice, and the pages that writes
  // change are mostly the same few, so a tenth of the checkpoints write far less (measured in
  // docs/performance.md).
  connection.pragma('temp_store = MEMORY');
  connection.pragma('wal_autocheckpoint = 10000');
  return connection;
}

/** A Kysely connection: transactions and writes go to the writer, other reads to the reader. */
class RoutedConnection implements DatabaseConnection {
  /** Set while this connection's transaction holds the writer. */
  member: Member | null = null;

  constructor(private readonly connections: SqliteConnections) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, reader, writes } = this.connections;
    if (this.member) {
      // SQLite rolls a whole transaction back by itself on a few errors (a full disk, I/O): what follows
      // must not run outside it, one autocommitted statement at a time.
      if (!writer.raw.inTransaction) throw new RolledBackByDatabase('the transaction was rolled back by the database', this.connections.lastWriteFailure);
      return this.connections.write(() => writer.run(query.sql, query.parameters)) as QueryResult<R>;
    }
    if (reader && SelectQueryNode.is(query.query)) return reader.run(query.sql, query.parameters) as QueryResult<R>;
    // A single write (or a read of an in-memory database) is a member of a group of its own.
    const member = await writes.begin();
    let result: QueryResult<R>;
    try {
      result = this.connections.write(() => writer.run(query.sql, query.parameters)) as QueryResult<R>;
    } catch (error) {
      await writes.rollback(member);
      throw error;
    }
    await writes.commit(member);
    return result;
  }

  /** Hands over the transaction's writer membership, once. */
  take(): Member | null {
    const member = this.member;
    this.member = null;
    return member;
  }

  // eslint-disable-next-line require-yield -- the service never streams; Kysely's interface requires the method
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on SQLite here');
  }
}

class RoutedDriver implements Driver {
  constructor(private readonly connections: SqliteConnections) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this.connections);
  }

  async beginTransaction(connection: RoutedConnection): Promise<void> {
    connection.member = await this.connections.writes.begin();
  }

  /** Resolves once the transaction is durable: committed with the rest of its group (src/db/sqlite-group-commit.ts). */
  async commitTransaction(connection: RoutedConnection): Promise<void> {
    const member = connection.take();
    if (member) await this.connections.writes.commit(member);
  }

  /** Kysely also calls this after a failed commit: by then the connection holds nothing, and it does nothing. */
  async rollbackTransaction(connection: RoutedConnection): Promise<void> {
    const member = connection.take();
    if (member) await this.connections.writes.rollback(member);
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.connections.writes.drain();
    this.connections.close();
  }
}

const byDatabase = new WeakMap<object, SqliteConnections>();

/**
 * Kysely's SQLite dialect with the service's own driver: Kysely's stock driver prepares every statement
 * anew and sends reads and writes through one connection behind one lock, so a read waited for any open
 * transaction. Query building, compiling and results are Kysely's own.
 */
export function sqliteDialect(connections: SqliteConnections): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new RoutedDriver(connections),
    createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/** Remembers which connections stand behind a Kysely instance (for `sqliteConnectionsOf`). */
export function registerSqlite(db: object, connections: SqliteConnections): void {
  byDatabase.set(db, connections);
}

/**
 * The SQLite connections behind a Kysely instance, or undefined for PostgreSQL and for transactions
 * (a transaction is its own Kysely instance, and its reads must see its own writes).
 */
export function sqliteConnectionsOf(db: object): SqliteConnections | undefined {
  return byDatabase.get(db);
}

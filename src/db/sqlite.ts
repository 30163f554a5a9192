import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SelectQueryNode,
  type OperationNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

const STATEMENT_CACHE_SIZE = 500;

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

  /** The rows of a statement that returns rows, as objects keyed by column name. */
  all(text: string, parameters: readonly unknown[]): unknown[] {
    return rowsOf(this.prepared(text), parameters);
  }

  run(text: string, parameters: readonly unknown[]): QueryResult<unknown> {
    const prepared = this.prepared(text);
    if (prepared.toRow) return { rows: rowsOf(prepared, parameters) };
    const { statement } = prepared;
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}

/** Hands the one writer connection to one user at a time (a transaction, or a single write). */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async lock(): Promise<() => void> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return release;
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
  readonly writerLock = new Mutex();
  /** Writes seen per table, and writes whose table is unknown (raw SQL, other processes). */
  private readonly tableWrites = new Map<string, number>();
  private unknownWrites = 0;
  private lastDataVersion = -1;
  private readonly dataVersion: SQLite.Statement;

  constructor(file: string) {
    const inMemory = file === ':memory:';
    if (!inMemory) fs.mkdirSync(path.dirname(file), { recursive: true });
    this.writer = new CachedConnection(configure(new SQLite(file)));
    // The reader opens after the writer has switched the file to WAL; query_only makes it refuse writes.
    this.reader = inMemory ? null : new CachedConnection(configure(new SQLite(file)));
    this.reader?.raw.pragma('query_only = ON');
    this.dataVersion = this.writer.raw.prepare('pragma data_version').pluck();
  }

  /**
   * A number that changes whenever `table` may have changed: a write to it through this process (noted
   * when the statement runs and again when its transaction ends, so a reader racing the commit cannot keep
   * the old row), a write of unknown target, or a commit by another process (SQLite's data_version).
   * Caches of rows from that table stay valid while it is unchanged.
   */
  writeVersion(table: string): number {
    const dataVersion = this.dataVersion.get() as number;
    if (dataVersion !== this.lastDataVersion) {
      this.lastDataVersion = dataVersion;
      this.unknownWrites++;
    }
    return this.unknownWrites + (this.tableWrites.get(table) ?? 0);
  }

  /** Records a write about to run (or just committed) on the writer. */
  noteWrite(table: string | null): void {
    if (table === null) this.unknownWrites++;
    else this.tableWrites.set(table, (this.tableWrites.get(table) ?? 0) + 1);
  }

  /**
   * Runs a read outside any transaction, synchronously, on the reader; `undefined` for an in-memory
   * database, whose reads must queue for the writer instead.
   */
  readNow(text: string, parameters: readonly unknown[]): unknown[] | undefined {
    return this.reader?.all(text, parameters);
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
  return connection;
}

/** The table an insert, update or delete writes to; null when it cannot be told (raw SQL). */
function writtenTable(node: OperationNode): string | null {
  const target = (node as { into?: OperationNode; table?: OperationNode; from?: { froms: OperationNode[] } }).into
    ?? (node as { table?: OperationNode }).table
    ?? (node as { from?: { froms: OperationNode[] } }).from?.froms[0];
  const table = target?.kind === 'AliasNode' ? (target as unknown as { node: OperationNode }).node : target;
  return table?.kind === 'TableNode' ? (table as unknown as { table: { identifier: { name: string } } }).table.identifier.name : null;
}

/** A Kysely connection: transactions and writes go to the writer, other reads to the reader. */
class RoutedConnection implements DatabaseConnection {
  /** Set while this connection holds the writer for a transaction. */
  release: (() => void) | null = null;
  /** Tables written by the open transaction, noted again when it ends. */
  readonly written = new Set<string | null>();

  constructor(private readonly connections: SqliteConnections) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, reader } = this.connections;
    const read = SelectQueryNode.is(query.query);
    if (!read) {
      const table = writtenTable(query.query);
      this.connections.noteWrite(table);
      if (this.release) this.written.add(table);
    }
    if (this.release) return writer.run(query.sql, query.parameters) as QueryResult<R>;
    if (reader && read) return reader.run(query.sql, query.parameters) as QueryResult<R>;
    const release = await this.connections.writerLock.lock();
    try {
      return writer.run(query.sql, query.parameters) as QueryResult<R>;
    } finally {
      release();
      if (!read) this.connections.noteWrite(writtenTable(query.query));
    }
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
    const release = await this.connections.writerLock.lock();
    try {
      this.connections.writer.run('begin', []);
    } catch (error) {
      release();
      throw error;
    }
    connection.release = release;
  }

  async commitTransaction(connection: RoutedConnection): Promise<void> {
    try {
      this.connections.writer.run('commit', []);
    } catch (error) {
      // A failed COMMIT leaves the transaction open: roll it back so the writer is free again.
      await this.rollbackTransaction(connection);
      throw error;
    }
    this.finish(connection);
  }

  async rollbackTransaction(connection: RoutedConnection): Promise<void> {
    try {
      if (this.connections.writer.raw.inTransaction) this.connections.writer.run('rollback', []);
    } finally {
      this.finish(connection);
    }
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.connections.close();
  }

  private finish(connection: RoutedConnection): void {
    for (const table of connection.written) this.connections.noteWrite(table);
    connection.written.clear();
    const release = connection.release;
    connection.release = null;
    release?.();
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

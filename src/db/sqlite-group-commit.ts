/** Runs one statement on the writer connection. */
export interface WriterStatements {
  run(text: string): void;
  /** Whether the connection is inside a transaction (SQLite may roll one back by itself on some errors). */
  readonly inTransaction: boolean;
  /** The code of the last failed write, when known: why SQLite rolled a transaction back by itself. */
  readonly lastFailureCode?: string | null;
}

/**
 * SQLite rolled a transaction back by itself (a full disk, an I/O error). `code` is that error's code when
 * known (`SQLITE_FULL`), else SQLITE_ABORT_ROLLBACK; either way nothing of the transaction was kept.
 */
export class RolledBackByDatabase extends Error {
  override name = 'RolledBackByDatabase';
  readonly code: string;

  constructor(message: string, cause: string | null | undefined) {
    super(message);
    this.code = cause ?? 'SQLITE_ABORT_ROLLBACK';
  }
}

/** Hands the writer connection to one user at a time (first come, first served). */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async lock(): Promise<() => void> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return release;
  }
}

/** One user of the writer: a transaction, or a single write outside one. */
export interface Member {
  release: () => void;
  /** false for the member that opened the group's transaction; true for those that joined it (a savepoint). */
  joined: boolean;
}

interface Group {
  opened: number;
  members: number;
  /** Settles when the group's transaction commits (or fails): what every finished member waits for. */
  outcome: Promise<void>;
  /** Run once the group's transaction has committed (`afterCommit`). */
  committed: (() => void)[];
  resolve(): void;
  reject(error: unknown): void;
}

export interface GroupLimits {
  /** Members per transaction at most. */
  members: number;
  /** A group open this long commits at its next member's end, whoever waits. */
  ms: number;
}

const DEFAULT_LIMITS: GroupLimits = { members: 32, ms: 20 };

function openGroup(): Group {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const outcome = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // Members that wait for the outcome see its failure; with no one waiting it must not surface as unhandled.
  outcome.catch(() => undefined);
  return { opened: Date.now(), members: 0, outcome, resolve, reject, committed: [] };
}

/**
 * Group commit on the one SQLite writer. Users of the writer still run one at a time, each as a savepoint of
 * a shared transaction. A member that finishes gives the writer back without committing; the transaction
 * commits once the event loop has run the other requests of the same turn (a setImmediate), so the writes
 * of every request that arrived together share one COMMIT. Each member's commit resolves only once that
 * COMMIT has succeeded, so no write is acknowledged before it is durable, and a failed COMMIT fails every
 * member of the group.
 *
 * What it saves: a commit writes each page the transaction changed to the WAL, and the pages that
 * consecutive writes change are mostly the same (the right-hand leaves of the tables and indexes they append
 * to, the workspace's audit head, the day's counters); a group writes them once. One client at a time gets
 * a plain transaction per write: the member that opens a group needs no savepoint, and the wait is one turn
 * of the event loop.
 *
 * A member rolled back undoes only its own savepoint, and still waits for the group's outcome before it
 * returns: what it read from earlier members (an idempotent replay, say) is durable by the time it answers.
 * Constraints are immediate (foreign keys are checked per statement), so one member's bad write fails that
 * member, not the group; deferred constraints (checked at COMMIT) would fail the whole group.
 */
export class GroupCommit {
  private group: Group | null = null;
  private flushScheduled = false;

  constructor(
    private readonly writer: WriterStatements,
    private readonly lock: Mutex,
    private readonly limits: GroupLimits = DEFAULT_LIMITS,
  ) {}

  /** Takes the writer: opens the group's transaction, or joins the open one with a savepoint. */
  async begin(): Promise<Member> {
    const release = await this.lock.lock();
    const joined = this.group !== null;
    try {
      if (joined) {
        this.writer.run('savepoint member');
      } else {
        // IMMEDIATE takes the file's write lock now: a transaction reads the latest commit of any process
        // and no other process can write under it until it ends (idempotency relies on it, decision 0018).
        this.writer.run('begin immediate');
        this.group = openGroup();
      }
    } catch (error) {
      // The earlier members' work still stands: commit it for them, then give the writer back.
      if (joined) await this.commitGroup().catch(() => undefined);
      release();
      throw error;
    }
    return { release, joined };
  }

  /**
   * Runs `callback` once the open transaction has committed (at once when none is open). A member rolled back
   * alone does not cancel it: callers use it to say "look again", which costs nothing when nothing changed.
   */
  afterCommit(callback: () => void): void {
    if (this.group) this.group.committed.push(callback);
    else queueMicrotask(callback);
  }

  /** Ends a member's work as done; resolves once the group's transaction has committed it. */
  async commit(member: Member): Promise<void> {
    if (member.joined) {
      try {
        this.writer.run('release member');
      } catch (error) {
        await this.rollback(member);
        throw error;
      }
    }
    await this.finish(member);
  }

  /** Undoes a member's work; resolves once the rest of its group has settled (see the class comment). */
  async rollback(member: Member): Promise<void> {
    const group = this.group!;
    if (!member.joined) {
      // The member that opened the group holds the writer since: the group is its work alone.
      this.group = null;
      try {
        if (this.writer.inTransaction) this.writer.run('rollback');
      } finally {
        group.resolve();
        member.release();
      }
      return;
    }
    if (!this.writer.inTransaction) {
      // SQLite rolled the whole transaction back by itself (a full disk, an I/O error): the group's work is gone.
      this.abandon(new RolledBackByDatabase('the database rolled back the transaction of a group of writes; retry', this.writer.lastFailureCode));
      member.release();
      return;
    }
    try {
      this.writer.run('rollback to member');
      this.writer.run('release member');
    } catch (error) {
      // The savepoint cannot be undone: the group's transaction is in an unknown state, so none of it stays.
      this.abandon(error);
      member.release();
      throw error;
    }
    await this.finish(member);
  }

  /** Gives up the open group: rolls its transaction back and fails every member waiting for it. */
  private abandon(error: unknown): void {
    const group = this.group!;
    this.group = null;
    try {
      if (this.writer.inTransaction) this.writer.run('rollback');
    } finally {
      group.reject(error);
    }
  }

  /**
   * Gives the writer back and leaves the group open for the writes of this turn of the event loop; the
   * group commits once they have run (a setImmediate), or at once when it has reached its limits.
   */
  private async finish(member: Member): Promise<void> {
    const group = this.group!;
    group.members++;
    if (group.members >= this.limits.members || Date.now() - group.opened >= this.limits.ms) {
      try {
        await this.commitGroup();
      } finally {
        member.release();
      }
      return;
    }
    member.release();
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        void this.drain();
      });
    }
    return group.outcome;
  }

  /**
   * Commits the open group, after the members already waiting for the writer (the lock is first come,
   * first served). Also called before the connections close, so a shutdown loses no write in flight.
   */
  async drain(): Promise<void> {
    const release = await this.lock.lock();
    try {
      if (this.group) await this.commitGroup().catch(() => undefined);
    } finally {
      release();
    }
  }

  private async commitGroup(): Promise<void> {
    try {
      this.writer.run('commit');
    } catch (error) {
      // A failed COMMIT leaves the transaction open: roll it back so the writer is free again.
      this.abandon(error);
      throw error;
    }
    const group = this.group!;
    this.group = null;
    group.resolve();
    for (const callback of group.committed) {
      try {
        callback();
      } catch {
        // A listener's failure is its own; the commit stands.
      }
    }
  }
}

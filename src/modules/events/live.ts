import type { Kysely } from 'kysely';
import type { CommitSignals } from '../../db/commit-signals.js';
import type { Database } from '../../db/schema.js';
import { parseJson } from '../../lib/json.js';
import { eventRepository, type EventRow } from './repository.js';
import { conversationOf } from './writer.js';

/** Events read from the log per query. */
const PAGE = 500;
/** Every stream's tail is read again this often even without a signal (a write of another process on SQLite). */
export const LIVE_HEARTBEAT_MS = 15_000;
/**
 * The heartbeat's work is spread over this many ticks per period: each stream writes its keep-alive in its
 * own slot, so 5,000 idle streams cost a few hundred writes a second, not 5,000 writes in one turn of the
 * event loop (which stalls every other request for as long).
 */
const HEARTBEAT_SLOTS = 15;

/** An event as streams get it: its data parsed once for all of them. */
export interface LiveEvent {
  id: string;
  seq: number;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  /** The conversation it concerns, if any: streams of one conversation get only its events. */
  conversationId: string | null;
}

export interface LiveSubscriber {
  /** Resume after this event number (`Last-Event-ID`); from now when absent. */
  after?: number;
  /** Only this conversation's events (the widget's stream); every event of the workspace when absent. */
  conversationId?: string;
  /** Events for the stream, in order; each is delivered once. */
  deliver(events: LiveEvent[]): void;
  /** Called on every heartbeat (a stream writes a keep-alive). */
  heartbeat?(): void;
  /** Ends the stream: the service is shutting down (its client reconnects to another instance). */
  end(): void;
}

export interface LiveSubscription {
  /** The number of the last event the stream has been given (or skipped), to resume after. */
  readonly seq: number;
  close(): void;
}

interface Subscriber extends LiveSubscriber {
  seq: number;
  /** The heartbeat tick (of HEARTBEAT_SLOTS) at which this stream writes its keep-alive. */
  slot: number;
  /** Events the shared tail read while this subscriber was still reading what it missed. */
  pending: LiveEvent[] | null;
}

/** One workspace's log as this instance follows it: read once per signal, handed to every subscriber. */
interface Tail {
  seq: number;
  /** Streams of the whole workspace, and streams of one conversation by its id. */
  everything: Set<Subscriber>;
  byConversation: Map<string, Set<Subscriber>>;
  reading: boolean;
  again: boolean;
  /** Settles once `seq` holds the workspace's head at the time the tail was opened. */
  ready: Promise<void>;
}

function live(row: EventRow): LiveEvent {
  const data = parseJson<Record<string, unknown>>(row.data, {});
  // An instance of the version before migration 0025, still running during an upgrade, writes no conversation_id.
  return { id: row.id, seq: Number(row.seq), type: row.type, created_at: row.created_at, data, conversationId: row.conversation_id ?? conversationOf(row.type, data) };
}

function hand(subscriber: Subscriber, events: LiveEvent[]): void {
  if (subscriber.pending) {
    subscriber.pending.push(...events);
    return;
  }
  const fresh = events.filter((event) => event.seq > subscriber.seq && (subscriber.conversationId === undefined || event.conversationId === subscriber.conversationId));
  if (fresh.length === 0) return;
  subscriber.seq = fresh.at(-1)!.seq;
  subscriber.deliver(fresh);
}

function subscribersOf(tail: Tail): Subscriber[] {
  return [...tail.everything, ...[...tail.byConversation.values()].flatMap((set) => [...set])];
}

/** Hands a batch to the streams it concerns: every whole-workspace stream, and each conversation's streams. */
function fanOut(tail: Tail, events: LiveEvent[]): void {
  for (const subscriber of tail.everything) hand(subscriber, events);
  const byConversation = new Map<string, LiveEvent[]>();
  for (const event of events) {
    if (event.conversationId && tail.byConversation.has(event.conversationId)) {
      const list = byConversation.get(event.conversationId) ?? [];
      list.push(event);
      byConversation.set(event.conversationId, list);
    }
  }
  for (const [conversationId, list] of byConversation) {
    for (const subscriber of tail.byConversation.get(conversationId) ?? []) hand(subscriber, list);
  }
}

/**
 * Live delivery of the domain events to streams held on this instance (the widget's conversation stream,
 * the dashboard's). The event log is the only source: a commit signal (src/db/commit-signals.ts) says which
 * workspace's log grew, and that log is read once from the last number this instance has seen and handed to
 * each of its streams. A stream resumed with `Last-Event-ID` first reads what it missed, then joins.
 */
export function createLiveEvents(deps: { db: Kysely<Database>; signals: CommitSignals; log: { warn(obj: object, msg: string): void } }) {
  const { db, signals, log } = deps;
  const tails = new Map<string, Tail>();
  let stopListening: (() => void) | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  // Streams joined so far: spreads them over the heartbeat's slots.
  let joined = 0;

  async function read(workspaceId: string, tail: Tail): Promise<void> {
    if (tail.reading) {
      tail.again = true;
      return;
    }
    tail.reading = true;
    try {
      do {
        tail.again = false;
        let rows: EventRow[];
        do {
          rows = await eventRepository.after(db, workspaceId, { after: tail.seq }, PAGE);
          if (rows.length === 0) break;
          tail.seq = Number(rows.at(-1)!.seq);
          fanOut(tail, rows.map(live));
        } while (rows.length === PAGE);
      } while (tail.again);
    } catch (error) {
      log.warn({ err: error, workspace_id: workspaceId }, 'live events: could not read the event log');
    } finally {
      tail.reading = false;
    }
  }

  function heard(workspaceId: string | null): void {
    if (workspaceId === null) {
      for (const [id, tail] of tails) void read(id, tail);
      return;
    }
    const tail = tails.get(workspaceId);
    if (tail) void read(workspaceId, tail);
  }

  function start(): void {
    if (stopListening) return;
    stopListening = signals.listen(heard);
    let tick = 0;
    heartbeat = setInterval(() => {
      const slot = tick++ % HEARTBEAT_SLOTS;
      for (const [id, tail] of tails) {
        if (slot === 0) void read(id, tail);
        for (const subscriber of subscribersOf(tail)) if (subscriber.slot === slot) subscriber.heartbeat?.();
      }
    }, LIVE_HEARTBEAT_MS / HEARTBEAT_SLOTS);
    heartbeat.unref();
  }

  function tailOf(workspaceId: string): Tail {
    let tail = tails.get(workspaceId);
    if (!tail) {
      const opened: Tail = { seq: 0, everything: new Set(), byConversation: new Map(), reading: true, again: false, ready: Promise.resolve() };
      opened.ready = eventRepository.head(db, workspaceId).then(
        (head) => {
          opened.seq = head;
          opened.reading = false;
          // A signal heard while the head was read is read now.
          if (opened.again) void read(workspaceId, opened);
        },
        (error: unknown) => {
          if (tails.get(workspaceId) === opened) tails.delete(workspaceId);
          throw error;
        },
      );
      tails.set(workspaceId, opened);
      tail = opened;
    }
    return tail;
  }

  return {
    /** Follows the workspace's events for one stream until `close()`. */
    async subscribe(workspaceId: string, options: LiveSubscriber): Promise<LiveSubscription> {
      start();
      const tail = tailOf(workspaceId);
      await tail.ready;
      const resumeAt = options.after === undefined ? tail.seq : Math.max(0, Math.min(options.after, tail.seq));
      const subscriber: Subscriber = { ...options, seq: resumeAt, slot: joined++ % HEARTBEAT_SLOTS, pending: resumeAt < tail.seq ? [] : null };
      const group = options.conversationId === undefined ? tail.everything : (tail.byConversation.get(options.conversationId) ?? new Set<Subscriber>());
      if (options.conversationId !== undefined) tail.byConversation.set(options.conversationId, group);
      group.add(subscriber);
      const leave = () => {
        group.delete(subscriber);
        if (options.conversationId !== undefined && group.size === 0) tail.byConversation.delete(options.conversationId);
        if (tail.everything.size === 0 && tail.byConversation.size === 0 && tails.get(workspaceId) === tail) tails.delete(workspaceId);
      };
      // What the stream missed, up to where the tail was when it joined (a conversation's stream reads only
      // that conversation's events); the tail's newer reads wait in `pending`.
      const upTo = tail.seq;
      try {
        let from = subscriber.seq;
        while (from < upTo) {
          const rows = await eventRepository.after(db, workspaceId, { after: from, upTo, conversationId: options.conversationId }, PAGE);
          if (rows.length === 0) break;
          from = Number(rows.at(-1)!.seq);
          const pending = subscriber.pending;
          subscriber.pending = null;
          hand(subscriber, rows.map(live));
          subscriber.pending = pending;
        }
      } catch (error) {
        leave();
        throw error;
      }
      const pending = subscriber.pending ?? [];
      subscriber.pending = null;
      subscriber.seq = Math.max(subscriber.seq, upTo);
      hand(subscriber, pending);
      return {
        get seq() {
          return subscriber.seq;
        },
        close: leave,
      };
    },

    /** Streams held now (for logs and the bench). */
    get streams(): number {
      let count = 0;
      for (const tail of tails.values()) count += subscribersOf(tail).length;
      return count;
    },

    /** Ends every stream and stops listening (shutdown). */
    close(): void {
      stopListening?.();
      stopListening = null;
      if (heartbeat) clearInterval(heartbeat);
      const open = [...tails.values()].flatMap(subscribersOf);
      tails.clear();
      for (const subscriber of open) subscriber.end();
    },
  };
}

export type LiveEvents = ReturnType<typeof createLiveEvents>;

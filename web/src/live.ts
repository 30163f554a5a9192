import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { keyOf } from './queries';

/** A workspace event as the dashboard's stream (GET /app/api/events) sends it. */
export interface LiveEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

const TYPES = ['conversation.created', 'conversation.updated', 'message.created', 'lead.created', 'lead.updated', 'chatbot.created', 'chatbot.updated', 'source.synced'];

type Listener = (event: LiveEvent) => void;
const listeners = new Set<Listener>();
let source: EventSource | null = null;

/**
 * EventSource reconnects by itself when the server ends a stream (it does after STREAM_MAX_MINUTES), resuming
 * with Last-Event-ID; but a refused reconnect (429 too many streams, 503 while the service restarts) closes it
 * for good. It is opened again this much later, from then on: the queries on screen are fetched anew.
 */
const REOPEN_AFTER_MS = 30_000;
let reopen: number | undefined;
/** Handed to the listeners when the stream was opened again after a refusal: events may have been missed. */
const RESYNC: LiveEvent = { id: '', type: 'resync', created_at: '', data: {} };

// Visitor messages that arrived live, per conversation, until that conversation is opened.
let unread = new Map<string, number>();
const unreadWatchers = new Set<() => void>();
const changed = () => unreadWatchers.forEach((watch) => watch());

function heard(event: LiveEvent): void {
  if (event.type === 'message.created' && event.data.role === 'user' && typeof event.data.conversation_id === 'string') {
    unread = new Map(unread).set(event.data.conversation_id, (unread.get(event.data.conversation_id) ?? 0) + 1);
    changed();
  }
  listeners.forEach((listener) => listener(event));
}

/** One stream for the whole app; the browser reconnects it by itself, resuming with Last-Event-ID. */
function connect(): void {
  if (source && source.readyState !== EventSource.CLOSED) return;
  window.clearTimeout(reopen);
  const missed = source !== null;
  const opened = new EventSource('/app/api/events');
  source = opened;
  for (const type of TYPES) {
    opened.addEventListener(type, (message) => heard(JSON.parse((message as MessageEvent<string>).data) as LiveEvent));
  }
  opened.addEventListener('error', () => {
    if (opened.readyState === EventSource.CLOSED && source === opened && listeners.size > 0) reopen = window.setTimeout(connect, REOPEN_AFTER_MS);
  });
  if (missed) opened.addEventListener('ready', () => listeners.forEach((listener) => listener(RESYNC)), { once: true });
}

/** Closes the stream (signing out, switching workspace) and forgets what was unread. */
export function disconnectLive(): void {
  window.clearTimeout(reopen);
  source?.close();
  source = null;
  unread = new Map();
  changed();
}

/** Calls `onEvent` with every event of the workspace while the component is mounted. */
export function useLiveEvents(onEvent: Listener): void {
  const latest = useRef(onEvent);
  latest.current = onEvent;
  useEffect(() => {
    connect();
    const listener: Listener = (event) => latest.current(event);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
}

/**
 * Refetches the cached queries under the API path `path` once, shortly after a burst of events that `concerns`
 * (so ten messages cost one request per query on screen).
 */
export function useLiveInvalidate(concerns: (event: LiveEvent) => boolean, path: string): void {
  const client = useQueryClient();
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  useLiveEvents((event) => {
    if (event !== RESYNC && !concerns(event)) return;
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => void client.invalidateQueries({ queryKey: keyOf(path) }), 200);
  });
}

/** Live visitor messages not yet seen, per conversation. */
export function useUnread(): ReadonlyMap<string, number> {
  return useSyncExternalStore(
    (watch) => {
      unreadWatchers.add(watch);
      return () => void unreadWatchers.delete(watch);
    },
    () => unread,
  );
}

/** The conversation is open on screen: its messages are read. */
export function markRead(conversationId: string): void {
  if (!unread.has(conversationId)) return;
  unread = new Map(unread);
  unread.delete(conversationId);
  changed();
}

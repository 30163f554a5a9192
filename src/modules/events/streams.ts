import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { budgetKeyOf } from '../../http/client-ip.js';
import { AppError } from '../../http/errors.js';
import { lastEventId, openEventStream } from '../../http/event-stream.js';
import type { LiveEvent, LiveEvents, LiveSubscription } from './live.js';

/** The Retry-After of a refused stream: a place frees when another stream of the same client ends. */
const REFUSED_RETRY_AFTER_SECONDS = 30;
/**
 * A stream ends at a random moment in the last tenth of its lifetime, so the streams opened together (all
 * clients reconnecting after a restart) are not all recycled together again an hour later.
 */
const LIFETIME_SPREAD = 0.1;

/** How one stream is served: whose events, which of them, and how they are said. */
export interface EventStreamOptions {
  workspaceId: string;
  /** A visitor's stream: only this conversation's events, and it counts against the conversation's limit. */
  conversationId?: string;
  /** The event name and data the stream sends for an event, or null to send nothing for it. */
  present(event: LiveEvent): [string, unknown] | null;
  /** How long the browser waits before reconnecting (the `retry:` field). */
  retryMs: number;
}

/** Streams open on this instance per key (client address or conversation); a key is forgotten with its last stream. */
function openCounts() {
  const counts = new Map<string, number>();
  return {
    count: (key: string) => counts.get(key) ?? 0,
    add(key: string): void {
      counts.set(key, (counts.get(key) ?? 0) + 1);
    },
    remove(key: string): void {
      const left = (counts.get(key) ?? 1) - 1;
      if (left <= 0) counts.delete(key);
      else counts.set(key, left);
    },
  };
}

function refused(detail: string, policy: string): AppError {
  return new AppError('too_many_streams', `${detail}; close one, or retry after ${REFUSED_RETRY_AFTER_SECONDS} s.`, { 'violated-policies': [policy] }, { 'Retry-After': String(REFUSED_RETRY_AFTER_SECONDS) });
}

/**
 * Every live event stream the service offers (the widget's conversation stream, the dashboard's) is served
 * here, bounded so that one client cannot hold an instance's sockets and memory: at most `perIp` streams per
 * client address (IPv6 by /64) and `perConversation` per visitor conversation, counted on this instance
 * (a count must be given back when its stream closes, whatever closes it, which a shared store cannot be
 * told by a process that dies); beyond, 429 `too_many_streams` before the stream opens. Each stream ends
 * after at most `maxMs`; the client reconnects with Last-Event-ID and misses nothing.
 */
export function createEventStreams(deps: { live: LiveEvents; limits: Config['streams'] }) {
  const { live, limits } = deps;
  const byAddress = openCounts();
  const byConversation = openCounts();

  /** Takes a place for a stream, or throws 429; the returned function gives it back (once). */
  function admit(address: string, conversationId: string | undefined): () => void {
    if (byAddress.count(address) >= limits.perIp) {
      throw refused(`This address already has ${limits.perIp} event streams open`, 'streams_per_ip');
    }
    if (conversationId !== undefined && byConversation.count(conversationId) >= limits.perConversation) {
      throw refused(`This conversation already has ${limits.perConversation} event streams open`, 'streams_per_conversation');
    }
    byAddress.add(address);
    if (conversationId !== undefined) byConversation.add(conversationId);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      byAddress.remove(address);
      if (conversationId !== undefined) byConversation.remove(conversationId);
    };
  }

  return {
    /**
     * Answers the request with the stream (resumed after its Last-Event-ID when sent), or refuses it with 429
     * when its client or its conversation holds too many. Resolves once the stream is live (`ready`).
     */
    async serve(request: FastifyRequest, reply: FastifyReply, options: EventStreamOptions): Promise<void> {
      const release = admit(budgetKeyOf(request.ip), options.conversationId);
      let subscription: LiveSubscription | null = null;
      let lifetime: NodeJS.Timeout | undefined;
      const stream = openEventStream(reply, {
        retryMs: options.retryMs,
        onClose: () => {
          clearTimeout(lifetime);
          release();
          subscription?.close();
        },
      });
      if (!stream.closed) {
        lifetime = setTimeout(() => stream.end(), limits.maxMs * (1 - LIFETIME_SPREAD * Math.random()));
        lifetime.unref();
      }
      try {
        subscription = await live.subscribe(options.workspaceId, {
          after: lastEventId(request.headers['last-event-id']),
          ...(options.conversationId === undefined ? {} : { conversationId: options.conversationId }),
          deliver(events) {
            for (const event of events) {
              const said = options.present(event);
              if (said) stream.send(said[0], said[1], event.seq);
            }
          },
          heartbeat: () => stream.keepAlive(),
          end: () => stream.end(),
        });
      } catch (error) {
        request.log.error({ err: error }, 'event stream could not start');
        stream.end();
        return;
      }
      if (stream.closed) subscription.close();
      else stream.send('ready', {}, subscription.seq);
    },
  };
}

export type EventStreams = ReturnType<typeof createEventStreams>;

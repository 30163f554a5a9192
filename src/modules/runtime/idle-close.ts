import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { systemContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import type { ConversationService } from '../conversations/service.js';
import type { WorkerLog } from './reply-worker.js';
import { runtimeRepository } from './repository.js';

const BATCH = 100;
/**
 * At most this many closes per sweep (one transaction and audit event each): a backlog (after downtime,
 * or conversations created before idle close existed) drains over several sweeps instead of holding the
 * writer for minutes.
 */
export const MAX_CLOSES_PER_SWEEP = 1000;

/**
 * Closes conversations idle for longer than `idleMinutes` (0 disables it), through the same service call
 * as an explicit close, so each close is audited (system actor `idle-close`) and the daily counters move.
 * Several instances may sweep at once: closing is idempotent under the conversation's row lock.
 */
export function createIdleCloser(deps: {
  db: Kysely<Database>;
  clock: Clock;
  conversations: ConversationService;
  idleMinutes: number;
  log: WorkerLog;
  maxPerSweep?: number;
}) {
  const { db, clock, conversations, idleMinutes, log, maxPerSweep = MAX_CLOSES_PER_SWEEP } = deps;
  return {
    /** One sweep; returns how many conversations it closed. */
    async sweep(): Promise<number> {
      if (idleMinutes <= 0) return 0;
      let closed = 0;
      for (;;) {
        const cutoff = new Date(clock.now().getTime() - idleMinutes * 60_000).toISOString();
        if (closed >= maxPerSweep) {
          log.info({ closed }, 'idle close: more idle conversations remain; the next sweep continues');
          return closed;
        }
        const limit = Math.min(BATCH, maxPerSweep - closed);
        const idle = await runtimeRepository.idleConversations(db, cutoff, limit);
        const before = closed;
        for (const conversation of idle) {
          try {
            const result = await conversations.close(systemContext(conversation.workspace_id, 'idle-close'), conversation.id, { idleBefore: cutoff });
            if (result.status === 'closed') closed++;
          } catch (error) {
            log.warn({ err: error, conversation_id: conversation.id }, 'idle close failed');
          }
        }
        if (idle.length < limit || closed === before) return closed;
      }
    },
  };
}

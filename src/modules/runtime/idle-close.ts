import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { systemContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import type { ConversationService } from '../conversations/service.js';
import type { WorkerLog } from './reply-worker.js';
import { runtimeRepository } from './repository.js';

const BATCH = 100;

/**
 * Closes conversations idle for longer than `idleMinutes` (0 disables it), through the same service call
 * as an explicit close, so each close is audited (system actor `idle-close`) and the daily counters move.
 * Several instances may sweep at once: closing is idempotent under the conversation's row lock.
 */
export function createIdleCloser(deps: { db: Kysely<Database>; clock: Clock; conversations: ConversationService; idleMinutes: number; log: WorkerLog }) {
  const { db, clock, conversations, idleMinutes, log } = deps;
  return {
    /** One sweep; returns how many conversations it closed. */
    async sweep(): Promise<number> {
      if (idleMinutes <= 0) return 0;
      let closed = 0;
      for (;;) {
        const cutoff = new Date(clock.now().getTime() - idleMinutes * 60_000).toISOString();
        const idle = await runtimeRepository.idleConversations(db, cutoff, BATCH);
        const before = closed;
        for (const conversation of idle) {
          try {
            const result = await conversations.close(systemContext(conversation.workspace_id, 'idle-close'), conversation.id, { idleBefore: cutoff });
            if (result.status === 'closed') closed++;
          } catch (error) {
            log.warn({ err: error, conversation_id: conversation.id }, 'idle close failed');
          }
        }
        if (idle.length < BATCH || closed === before) return closed;
      }
    },
  };
}

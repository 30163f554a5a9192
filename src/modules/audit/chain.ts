import { hash } from 'node:crypto';
import type { AuditEventsTable } from '../../db/schema.js';
import { canonicalJson } from '../../lib/canonical-json.js';

/**
 * The hash of an event: SHA-256 over the previous hash and the canonical JSON of every other column.
 * Changing, removing or reordering any event breaks the chain from that point on.
 */
export function eventHash(event: Omit<AuditEventsTable, 'hash'> & { hash?: string }): string {
  const { prev_hash: previous, hash: _ignored, ...rest } = event;
  const normalized = { ...rest, seq: Number(rest.seq) };
  return hash('sha256', `${previous}\n${canonicalJson(normalized)}`, 'hex');
}

/** Where a chain is broken. */
export interface ChainBreak {
  eventId: string | null;
  seq: number;
  reason: string;
}

/**
 * Checks a workspace's chain event by event, in sequence order (so it can stream over long chains):
 * numbering, links and hashes; `finish` then checks that the chain ends at the head recorded on the
 * workspace, so a removed tail is caught too.
 */
export function chainVerifier() {
  let previous = '';
  let expectedSeq = 1;
  return {
    /** Checks the next event; returns the break, or null when it is sound. */
    push(event: AuditEventsTable): ChainBreak | null {
      const fail = (reason: string): ChainBreak => ({ eventId: event.id, seq: Number(event.seq), reason });
      if (Number(event.seq) !== expectedSeq) return fail(`expected sequence number ${expectedSeq}, found ${event.seq}: an event is missing or out of order`);
      if (event.prev_hash !== previous) return fail('its link to the previous event does not match: an event before it was changed, removed or swapped');
      if (eventHash(event) !== event.hash) return fail('its content does not match its hash: the event was changed');
      previous = event.hash;
      expectedSeq += 1;
      return null;
    },
    /** Checks the end of the chain against the recorded head. */
    finish(head: { seq: number; hash: string }): ChainBreak | null {
      if (expectedSeq - 1 === head.seq && previous === head.hash) return null;
      return {
        eventId: null,
        seq: expectedSeq,
        reason: `the chain ends at event ${expectedSeq - 1} but the workspace records ${head.seq}: events were removed from the end or the head was changed`,
      };
    },
    /** How many events were verified. */
    get count(): number {
      return expectedSeq - 1;
    },
  };
}

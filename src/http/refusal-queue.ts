import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from './errors.js';
import { sendRefusal } from './error-handler.js';

/** How long after the last valid request the refusals keep yielding to valid ones. */
const YIELD_WINDOW_MS = 1000;

/**
 * Answers requests refused before any work (a key refused on its shape) after each event-loop turn's I/O (a
 * `setImmediate`), oldest first. While valid requests are being served (one in the last second), at most
 * `perTurn` refusals are answered per turn: under a storm of invalid keys the loop then comes back to its
 * sockets after a few refusals instead of after all of them, and a valid request read in the next turn waits
 * for a handful of refusals, not for the storm. With no valid traffic to protect, the refusals of a turn are
 * all answered at once, which is the cheapest way to answer them.
 *
 * Nothing is dropped, and the queue holds at most one request per open connection: a connection sends its
 * next request only after its answer.
 */
export class RefusalQueue {
  private readonly waiting: { request: FastifyRequest; reply: FastifyReply; problem: AppError }[] = [];
  private scheduled = false;
  private validSinceLastTurn = false;
  private lastValidAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly perTurn: number) {}

  /** A request passed the access check (a plain flag: the clock is read once per turn of refusals). */
  noteValid(): void {
    this.validSinceLastTurn = true;
  }

  add(request: FastifyRequest, reply: FastifyReply, problem: AppError): void {
    this.waiting.push({ request, reply, problem });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  private readonly drain = (): void => {
    const now = performance.now();
    if (this.validSinceLastTurn) {
      this.validSinceLastTurn = false;
      this.lastValidAt = now;
    }
    const limit = now - this.lastValidAt < YIELD_WINDOW_MS ? this.perTurn : this.waiting.length;
    // A batch off the front: the queue is at most as long as the number of open connections.
    for (const { request, reply, problem } of this.waiting.splice(0, limit)) sendRefusal(request, reply, problem);
    if (this.waiting.length > 0) setImmediate(this.drain);
    else this.scheduled = false;
  };
}

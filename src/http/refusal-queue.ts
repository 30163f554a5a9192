import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from './errors.js';
import { sendRefusal } from './error-handler.js';

/** How long after the last valid request the refusals keep yielding to valid ones. */
const YIELD_WINDOW_MS = 1000;

/**
 * Answers requests refused before any work (a key refused on its shape) at a lower priority than valid
 * requests, oldest first.
 *
 * - With no valid traffic to protect (none passed the access check in the last second), the refusals are
 *   answered after each event-loop turn's I/O (a `setImmediate`), all at once: the cheapest way to answer
 *   them, so an invalid-key storm alone keeps its throughput.
 * - While valid requests are being served, at most `perTick` refusals are answered per timer tick (about a
 *   millisecond). Every refusal answered invites that connection's next request, which costs parsing too,
 *   so under a storm the refusals would otherwise fill every moment the valid requests leave, and a valid
 *   request would nearly always arrive behind a few of them. Paced, the storm takes a small, bounded share
 *   of the loop (a few thousand answers per second), and a valid request rarely meets one.
 *
 * Nothing is dropped, and the queue holds at most one request per open connection: a connection sends its
 * next request only after its answer.
 */
export class RefusalQueue {
  private readonly waiting: { request: FastifyRequest; reply: FastifyReply; problem: AppError }[] = [];
  private scheduled = false;
  private lastValidAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly perTick: number) {}

  /** A request passed the access check. */
  noteValid(): void {
    this.lastValidAt = performance.now();
  }

  add(request: FastifyRequest, reply: FastifyReply, problem: AppError): void {
    this.waiting.push({ request, reply, problem });
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule();
    }
  }

  private yielding(): boolean {
    return performance.now() - this.lastValidAt < YIELD_WINDOW_MS;
  }

  private schedule(): void {
    if (this.yielding()) setTimeout(this.drain, 1);
    else setImmediate(this.drain);
  }

  private readonly drain = (): void => {
    const limit = this.yielding() ? this.perTick : this.waiting.length;
    // A batch off the front: the queue is at most as long as the number of open connections.
    for (const { request, reply, problem } of this.waiting.splice(0, limit)) sendRefusal(request, reply, problem);
    if (this.waiting.length > 0) this.schedule();
    else this.scheduled = false;
  };
}

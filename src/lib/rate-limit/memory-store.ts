import { decide } from './gcra.js';
import type { Budget, RateDecision, RateLimitStore } from './types.js';

/** Milliseconds on performance.now(): steady and forward-only, unlike the wall clock. */
export const monotonicMs = (): number => performance.now();

/** How many decisions between two sweeps of budgets that have refilled completely. */
const PRUNE_EVERY = 10_000;

/**
 * Budgets in this process's memory: right for one instance. Time is a monotonic clock, never the wall
 * clock: a wall clock stepped back would push every stored TAT into the future and lock keys out for the
 * length of the step, and one stepped forward would refill every budget at once. The check-and-spend runs
 * without awaiting, so it is atomic with respect to every other request of the process.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly tats = new Map<string, number>();
  private decided = 0;

  /** `now` is the store's time source (tests pass the monotonic side of their clock). */
  constructor(private readonly now: () => number = monotonicMs) {}

  async consume(budgets: Budget[]): Promise<RateDecision> {
    return this.decide(budgets, true);
  }

  async peek(budgets: Budget[]): Promise<RateDecision> {
    return this.decide(budgets, false);
  }

  private decide(budgets: Budget[], spend: boolean): RateDecision {
    const nowMs = this.now();
    const keys = new Array<string>(budgets.length);
    const stored = new Array<number | undefined>(budgets.length);
    for (let i = 0; i < budgets.length; i++) {
      const budget = budgets[i]!;
      stored[i] = this.tats.get((keys[i] = `${budget.policy}:${budget.id}`));
    }
    const { decision, next } = decide(budgets, stored, nowMs, spend);
    if (next) for (let i = 0; i < keys.length; i++) this.tats.set(keys[i]!, next[i]!);
    if (++this.decided % PRUNE_EVERY === 0) this.prune(nowMs);
    return decision;
  }

  // A TAT in the past means a full budget: forgetting it changes nothing.
  private prune(nowMs: number): void {
    for (const [key, tat] of this.tats) if (tat <= nowMs) this.tats.delete(key);
  }
}

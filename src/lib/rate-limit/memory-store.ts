import { decide } from './gcra.js';
import type { Budget, RateDecision, RateLimitStore } from './types.js';

/** Where a budget's TAT is kept: built once for a budget that is reused across requests (an API key's). */
function budgetKey(budget: Budget): string {
  return (budget.key ??= `${budget.policy}:${budget.id}`);
}

/**
 * Budgets in this process's memory: right for one instance. The check-and-spend is synchronous, so it is
 * atomic with respect to every other request of the process.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly tats = new Map<string, number>();
  private consumed = 0;

  async consume(budgets: Budget[], nowMs: number): Promise<RateDecision> {
    return this.consumeNow(budgets, nowMs);
  }

  consumeNow(budgets: Budget[], nowMs: number): RateDecision {
    const keys = new Array<string>(budgets.length);
    const stored = new Array<number | undefined>(budgets.length);
    for (let i = 0; i < budgets.length; i++) stored[i] = this.tats.get((keys[i] = budgetKey(budgets[i]!)));
    const { decision, next } = decide(budgets, stored, nowMs);
    if (next) for (let i = 0; i < keys.length; i++) this.tats.set(keys[i]!, next[i]!);
    if (++this.consumed % 10_000 === 0) this.prune(nowMs);
    return decision;
  }

  // A TAT in the past means a full budget: forgetting it changes nothing.
  private prune(nowMs: number): void {
    for (const [key, tat] of this.tats) if (tat <= nowMs) this.tats.delete(key);
  }
}

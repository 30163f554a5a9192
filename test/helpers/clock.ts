import type { Clock } from '../../src/lib/clock.js';

/**
 * The suites' one clock. The wall clock (`now`) can be pinned, set and stepped either way, as NTP or an
 * operator may do to a real one; the monotonic clock (`monotonicMs`, what rate limits measure with) only
 * moves when time passes: with `advance`, or with the real performance.now() while not pinned.
 */
export interface TestClock extends Clock {
  /** The wall clock's current instant, in ms since the epoch. */
  readonly ms: number;
  /** Pins the wall clock to an instant (every call returns it) until `release()`; pinning stops the monotonic clock too. */
  set(at: string | number): void;
  /** Time passes: moves the wall clock and the monotonic clock forward together. */
  advance(ms: number): void;
  /** Steps the wall clock by `ms`, forward or back, while the monotonic clock does not move (a clock step). */
  step(ms: number): void;
  /** Back to following the real clocks, never behind the instants seen so far. */
  release(): void;
}

/**
 * A TestClock: pinned at `start` when given, else following the real clocks (the wall clock then never
 * repeats a millisecond, so rows created one after another have distinct, ordered timestamps).
 */
export function testClock(start?: string | number): TestClock {
  const instant = (at: string | number) => (typeof at === 'number' ? at : Date.parse(at));
  let pinned = start !== undefined;
  // Pinned: the current values. Free: offsets added to Date.now() and performance.now().
  let wall = start === undefined ? 0 : instant(start);
  let mono = pinned ? performance.now() : 0;
  let last = 0;

  const wallMs = (): number => {
    if (pinned) return wall;
    last = Math.max(Date.now() + wall, last + 1);
    return last;
  };
  const monoMs = (): number => (pinned ? mono : performance.now() + mono);

  return {
    now: () => new Date(wallMs()),
    monotonicMs: monoMs,
    get ms() {
      return wallMs();
    },
    set(at) {
      if (!pinned) mono = monoMs();
      pinned = true;
      wall = instant(at);
    },
    advance(ms) {
      if (ms < 0) throw new Error('advance() moves time forward; step() moves the wall clock back');
      wall += ms;
      mono += ms;
      if (!pinned) last += ms;
    },
    step(ms) {
      wall += ms;
      // A step back is allowed to repeat instants already seen: that is what a step back does.
      if (!pinned) last = 0;
    },
    release() {
      if (!pinned) return;
      last = Math.max(last, wall);
      wall = 0;
      mono -= performance.now();
      pinned = false;
    },
  };
}

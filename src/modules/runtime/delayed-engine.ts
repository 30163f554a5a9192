import type { ReplyEngine, ReplyInput, ReplyOutput } from '../replies/engine.js';

/**
 * Wraps an engine so every answer starts `delayMs` later (REPLY_DELAY_MS, a test hook): the crash test
 * uses it to kill the server while a reply is still owed. Aborting the signal ends the wait early.
 */
export function delayedEngine(engine: ReplyEngine, delayMs: number): ReplyEngine {
  if (delayMs <= 0) return engine;
  return {
    async reply(input: ReplyInput): Promise<ReplyOutput> {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        input.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return engine.reply(input);
    },
  };
}

import type { ReplyEngine, ReplyInput, ReplyOutput } from '../replies/engine.js';

/**
 * A stand-in reply engine until the real one (src/modules/replies) is wired in: a fixed, deterministic
 * answer streamed in a few pieces, so the runtime (jobs, SSE, crash recovery) can be built and tested.
 */
export function createPlaceholderEngine(): ReplyEngine {
  return {
    async reply({ chatbot, onDelta }: ReplyInput): Promise<ReplyOutput> {
      const pieces = ['Thanks for your message! ', `${chatbot.name} `, 'will get back to you shortly.'];
      for (const piece of pieces) onDelta?.(piece);
      return { content: pieces.join(''), fallback: false, source: 'placeholder' };
    },
  };
}

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

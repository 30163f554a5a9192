import { streamText, type LanguageModel } from 'ai';
import type { LlmConfig } from '../../config.js';
import type { MessageSource, ReplyInput, ReplyOutcome } from './engine.js';
import type { ReplyPrompt } from './prompt.js';

/** One answer to produce, as the engine hands it to a provider. */
export interface GenerateRequest {
  input: ReplyInput;
  /** The agent's model, else LLM_MODEL. */
  model: string;
  /** The agent's temperature, else the provider's default. */
  temperature: number | undefined;
  /** Aborts on timeout or when the caller gives up. */
  signal: AbortSignal;
  /** Passes a piece of the answer on as it is produced. */
  emit(text: string): void;
}

/** A provider's whole answer: its text, the documents it used, and what kind of turn it was. */
export interface Generated {
  content: string;
  sources: MessageSource[];
  outcome: Exclude<ReplyOutcome, 'failed'>;
  /** How sure the answer is of its knowledge, in [0, 1] (the retrieval confidence it rests on); null for small talk and handoffs. */
  confidence: number | null;
}

/** A way of producing answers. `generate` resolves with the whole answer and throws on any failure. */
export interface ReplyProvider {
  /** For logs and `source`: `builtin`, or `openai:<model>` / `anthropic:<model>`. */
  source(model: string): string;
  generate(request: GenerateRequest): Promise<Generated>;
}

/** Raised when a stream ends because its signal aborted (the engine tells timeouts from the caller's aborts). */
export class GenerationAborted extends Error {
  override name = 'GenerationAborted';
}

/**
 * Streams a model's answer through the AI SDK, passing text deltas on, and throws on an error or abort
 * part: `streamText` reports failures inside the stream rather than by rejecting.
 */
export async function streamAnswer(model: LanguageModel, prompt: ReplyPrompt, request: GenerateRequest, llm: LlmConfig): Promise<string> {
  const result = streamText({
    model,
    system: prompt.system,
    messages: prompt.messages,
    temperature: request.temperature,
    maxOutputTokens: llm.maxOutputTokens,
    maxRetries: llm.maxRetries,
    abortSignal: request.signal,
    // The engine logs failures itself (without secrets); the default handler prints whole errors to stderr.
    onError: () => undefined,
  });
  let text = '';
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') {
      text += part.text;
      request.emit(part.text);
    } else if (part.type === 'error') {
      throw part.error instanceof Error ? part.error : new Error(String(part.error));
    } else if (part.type === 'abort') {
      throw new GenerationAborted('the answer was aborted');
    }
  }
  if (request.signal.aborted) throw new GenerationAborted('the answer was aborted');
  return text;
}

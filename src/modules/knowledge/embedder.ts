import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany } from 'ai';
import type { EmbeddingsConfig } from '../../config.js';
import { unit } from './vector-math.js';

/** Turns texts into unit vectors through one embedding model. */
export interface Embedder {
  /** The model's name: stored with an agent's vectors, so a change of model starts its index afresh. */
  readonly model: string;
  /**
   * `retries`: how often a failed request is tried again, `timeoutMs`: how long it may take (by default the
   * configured LLM_TIMEOUT_MS): ingestion can wait, a visitor's question cannot.
   */
  embed(texts: readonly string[], options?: { signal?: AbortSignal; retries?: number; timeoutMs?: number }): Promise<Float32Array[]>;
}

/** Texts per /embeddings request (OpenAI takes up to 2,048; smaller batches fail and retry cheaper). */
export const EMBEDDING_BATCH = 64;
// A chunk is a few hundred words; this bounds what one input sends (most models take 8,192 tokens).
const MAX_INPUT_CHARACTERS = 8000;

/** An embedder over an OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, LM Studio …). */
export function openAiEmbedder(config: EmbeddingsConfig, timeoutMs: number): Embedder {
  const provider = createOpenAICompatible({ name: 'embeddings', baseURL: config.baseUrl, ...(config.apiKey ? { apiKey: config.apiKey } : {}) });
  const model = provider.embeddingModel(config.model);
  return {
    model: config.model,
    async embed(texts, { signal, retries = 2, timeoutMs: limit = timeoutMs } = {}) {
      if (texts.length === 0) return [];
      // One controller per request, unhooked after: a job's signal lives for the whole sync, and a listener
      // per batch left on it would pile up.
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`no embeddings within ${limit} ms`)), limit);
      const cancel = () => controller.abort(signal?.reason);
      signal?.addEventListener('abort', cancel, { once: true });
      let embeddings: number[][];
      try {
        ({ embeddings } = await embedMany({
          model,
          values: texts.map((text) => text.slice(0, MAX_INPUT_CHARACTERS)),
          maxRetries: retries,
          abortSignal: controller.signal,
        }));
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancel);
      }
      return embeddings.map((embedding) => unit(embedding));
    },
  };
}

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LlmConfig } from '../../config.js';
import type { KnowledgeLookup } from './engine.js';
import { buildPrompt, generatedFrom } from './prompt.js';
import { streamAnswer, type ReplyProvider } from './provider.js';

/** Answers through an OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio …), streaming. */
export function openAiProvider(knowledge: KnowledgeLookup, llm: LlmConfig): ReplyProvider {
  const provider = createOpenAICompatible({ name: 'openai', baseURL: llm.openai.baseUrl, ...(llm.openai.apiKey ? { apiKey: llm.openai.apiKey } : {}) });
  return {
    source: (model) => `openai:${model}`,
    generate: async (request) => {
      const prompt = await buildPrompt(knowledge, llm, request.input);
      return generatedFrom(await streamAnswer(provider.chatModel(request.model), prompt, request, llm), prompt, request.input);
    },
  };
}

import { createAnthropic } from '@ai-sdk/anthropic';
import type { LlmConfig } from '../../config.js';
import type { KnowledgeLookup } from './engine.js';
import { buildPrompt, generatedFrom } from './prompt.js';
import { streamAnswer, type ReplyProvider } from './provider.js';

/** Answers through Anthropic's Messages API, streaming. */
export function anthropicProvider(knowledge: KnowledgeLookup, llm: LlmConfig): ReplyProvider {
  // The key is always passed explicitly: the SDK would otherwise read ANTHROPIC_API_KEY from the environment.
  const provider = createAnthropic({ apiKey: llm.anthropic.apiKey ?? '', ...(llm.anthropic.baseUrl ? { baseURL: llm.anthropic.baseUrl } : {}) });
  return {
    source: (model) => `anthropic:${model}`,
    generate: async (request) => {
      const prompt = await buildPrompt(knowledge, llm, request.input);
      // The Messages API wants the conversation to open with a visitor turn (a welcome message may come first).
      const firstVisitorTurn = prompt.messages.findIndex((message) => message.role === 'user');
      const messages = firstVisitorTurn > 0 ? prompt.messages.slice(firstVisitorTurn) : prompt.messages;
      return generatedFrom(await streamAnswer(provider.messages(request.model), { ...prompt, messages }, request, llm), prompt, request.input);
    },
  };
}

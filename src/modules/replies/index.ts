import type { LlmConfig } from '../../config.js';
import type { Db } from '../../db/schema.js';
import { fallbackAnswer } from './answers.js';
import { anthropicProvider } from './anthropic.js';
import { builtinProvider } from './builtin.js';
import type { KnowledgeLookup, ReplyEngine, ReplyInput, ReplyOutput } from './engine.js';
import { createKnowledgeSearch, type KnowledgeSearch } from '../knowledge/retrieval.js';
import { replyLanguage } from './language.js';
import { openAiProvider } from './openai.js';
import type { ReplyProvider } from './provider.js';

export type { ReplyEngine, ReplyInput, ReplyOutput } from './engine.js';

/** Where the engine reports failed replies (a pino or Fastify logger). */
export interface ReplyLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** What a reply engine is built from. */
export interface ReplyEngineDeps {
  db: Db;
  llm: LlmConfig;
  logger: ReplyLogger;
  /** Retrieval over the agent's sources; full text alone when absent. */
  knowledge?: KnowledgeSearch;
  /** The provider configuration in effect, asked per reply (dashboard settings apply without a restart); `llm` when absent. */
  effectiveLlm?: () => Promise<LlmConfig>;
}

function providerFor(knowledge: KnowledgeLookup, llm: LlmConfig): ReplyProvider {
  switch (llm.provider) {
    case 'openai':
      return openAiProvider(knowledge, llm);
    case 'anthropic':
      return anthropicProvider(knowledge, llm);
    default:
      return builtinProvider(knowledge);
  }
}

/** The error's message with any configured API key blanked out (a provider may echo what it was sent). */
function describeError(error: unknown, secrets: readonly string[]): string {
  const { message, statusCode } = (error ?? {}) as { message?: unknown; statusCode?: unknown };
  let text = `${typeof statusCode === 'number' ? `${statusCode} ` : ''}${typeof message === 'string' ? message : String(error)}`;
  for (const secret of secrets) text = text.replaceAll(secret, '[redacted]');
  return text.slice(0, 500);
}

/**
 * The reply engine of the configured provider. It applies the agent's model and temperature over
 * LLM_MODEL, streams deltas to `onDelta`, bounds the whole reply by LLM_TIMEOUT_MS, and never throws:
 * on any failure it logs the cause (never a key) and answers with the polite fallback.
 */
export function createReplyEngine({ db, llm: configured, logger, knowledge = createKnowledgeSearch(null, logger), effectiveLlm = async () => configured }: ReplyEngineDeps): ReplyEngine {
  const lookup: KnowledgeLookup = (workspaceId, chatbotId, question, limit, options) => knowledge.search(db, workspaceId, chatbotId, question, limit, options);
  const build = (llm: LlmConfig) => ({ llm, provider: providerFor(lookup, llm), secrets: [llm.openai.apiKey, llm.anthropic.apiKey].filter((key): key is string => Boolean(key)) });
  let built = build(configured);
  // The provider is rebuilt only when the configuration in effect changes (settings saved in the dashboard).
  async function current(): Promise<typeof built> {
    try {
      const llm = await effectiveLlm();
      if (llm !== built.llm) built = build(llm);
      return built;
    } catch (error) {
      // Unreadable settings: this reply fails (logged, fallback answer) like any provider failure.
      return { llm: configured, secrets: [], provider: { source: () => 'unavailable', generate: () => Promise.reject(error) } };
    }
  }

  return {
    async reply(input: ReplyInput): Promise<ReplyOutput> {
      const { llm, provider, secrets } = await current();
      const model = input.chatbot.model ?? llm.model;
      const source = provider.source(model);
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new Error(`no complete answer within ${llm.timeoutMs} ms`)), llm.timeoutMs);
      const signal = input.signal ? AbortSignal.any([timeout.signal, input.signal]) : timeout.signal;
      let streamed = false;
      // A failing listener (a visitor's closed connection) must not cost the stored answer.
      const emit = (text: string) => {
        if (text === '') return;
        streamed = true;
        try {
          input.onDelta?.(text);
        } catch {
          // The final content is what counts; the listener only mirrors it.
        }
      };
      try {
        const generated = await provider.generate({ input, model, temperature: input.chatbot.temperature ?? undefined, signal, emit });
        if (signal.aborted) throw signal.reason;
        if (generated.content.trim() === '') throw new Error('the provider answered with no text');
        return { ...generated, fallback: false, source };
      } catch (error) {
        const failure = timeout.signal.aborted ? 'timeout' : input.signal?.aborted ? 'aborted' : 'error';
        const details = { source, workspace_id: input.workspaceId, chatbot_id: input.chatbot.id, failure, error: describeError(error, secrets) };
        if (failure === 'aborted') logger.info(details, 'agent reply aborted by the caller');
        else logger.warn(details, 'agent reply failed: the visitor gets the fallback answer');
        // The fallback replaces whatever was streamed: listeners withdraw it, then receive the fallback.
        const question = input.transcript.findLast((message) => message.role === 'user')?.content ?? '';
        const content = fallbackAnswer(input.chatbot, replyLanguage(question, { agent: input.chatbot.language, locale: input.locale }));
        if (streamed) {
          try {
            input.onReset?.();
          } catch {
            // As for onDelta.
          }
        }
        emit(content);
        return { content, fallback: true, source, failure, sources: [], outcome: 'failed', confidence: null };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

import type { Selectable } from 'kysely';
import type { ChatbotsTable, MessagesTable } from '../../db/schema.js';
import type { KnowledgeHit, SearchOptions } from '../knowledge/chunks.js';
import type { MessageOutcome } from '../messages/schema.js';

/** What an agent's answer is produced from. */
export interface ReplyInput {
  workspaceId: string;
  /** The agent as stored (instructions, knowledge JSON, model, temperature, lead_capture JSON, …). */
  chatbot: Selectable<ChatbotsTable>;
  /** The recent transcript, oldest first, ending with the visitor's message being answered. */
  transcript: Array<Selectable<MessagesTable>>;
  /** Whether the visitor's contact details are known (a lead, or an email on the conversation): a handoff asks for them otherwise. */
  contactKnown?: boolean;
  /** The visitor's browser language tag (the conversation's locale), when the widget sent one. */
  locale?: string | null;
  /** Called with each piece of text as it is generated (for server-sent events). */
  onDelta?: (text: string) => void;
  /** Aborts generation (the visitor went away, the server is shutting down). */
  signal?: AbortSignal;
  /**
   * Called when the text streamed so far is withdrawn (the provider failed mid-answer): the fallback is
   * streamed next. The deltas since the last reset always add up to the final `content`.
   */
  onReset?: () => void;
}

/** A knowledge document an answer used, as messages carry it (`sources` of an assistant message). */
export interface MessageSource {
  source_id: string;
  document_id: string;
  title: string;
  url: string | null;
}

/**
 * What kind of turn the answer was: `answered` from knowledge; `best_matches` (not sure: the documents that
 * may help are listed, and the question is recorded for the owner); `unanswered` (the knowledge does not say:
 * the question is recorded for the owner); `conversational` (greeting, thanks, goodbye, "who are you");
 * `handoff` (the visitor asked for a person: the conversation is marked as waiting for one); `failed` (the
 * provider failed: the fallback).
 */
export type ReplyOutcome = MessageOutcome;

/** Whether an outcome leaves the question unanswered from knowledge: counted as such and listed for the owner. */
export function leavesQuestionOpen(outcome: ReplyOutcome): boolean {
  return outcome === 'unanswered' || outcome === 'best_matches';
}

/** The answer: its full text, and whether it is the polite fallback given when the provider failed. */
export interface ReplyOutput {
  content: string;
  fallback: boolean;
  /** The documents the answer used, best first; empty when it used no knowledge. */
  sources: MessageSource[];
  outcome: ReplyOutcome;
  /**
   * How sure the answer is of its knowledge, in [0, 1]: for the builtin provider, the confidence of the sentence
   * it states (or of the best passage when it did not answer); for a model, that of the best passage it was
   * given. Null for small talk, handoffs and the fallback. Not stored: for logs and the evaluation.
   */
  confidence: number | null;
  /** Which provider and model produced it (for logs), e.g. `builtin`, `openai:gpt-4o-mini`. */
  source: string;
  /** Why the fallback was given: the provider failed or answered nothing, timed out, or `signal` aborted. */
  failure?: 'error' | 'timeout' | 'aborted';
}

/**
 * Produces an agent's answer. It never throws for a provider failure or timeout: it logs the cause and
 * returns the fallback answer, so a visitor always gets a reply and their message is never lost.
 */
export interface ReplyEngine {
  reply(input: ReplyInput): Promise<ReplyOutput>;
}

/** What the agent retrieves from its sources for a question, best first (src/modules/knowledge/retrieval.ts). */
export type KnowledgeLookup = (workspaceId: string, chatbotId: string, question: string, limit: number, options?: SearchOptions) => Promise<KnowledgeHit[]>;

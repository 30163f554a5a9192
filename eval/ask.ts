/**
 * How the evaluation asks an agent a question: the reply engine the service runs (the builtin provider, or the
 * model provider `llm` configures), in process over the service's database, each question as the only visitor
 * message of a new conversation. Its answer carries what an assistant message object carries (`content`,
 * `sources`, `outcome`), and whether the pieces streamed while answering add up to it.
 */
import type { Kysely } from 'kysely';
import { loadConfig, type LlmConfig } from '../src/config.js';
import type { Database } from '../src/db/schema.js';
import { createKnowledgeSearch } from '../src/modules/knowledge/retrieval.js';
import { createReplyEngine } from '../src/modules/replies/index.js';
import type { ReplyInput } from '../src/modules/replies/engine.js';

/**
 * The kinds of reply the evaluation tells apart (the `outcome` of an assistant message). `best_matches`: not
 * confident, a few sources offered as links.
 */
export const REPLY_KINDS = ['answered', 'best_matches', 'unanswered', 'conversational', 'handoff', 'failed'] as const;
/** A kind of reply. */
export type ReplyKind = (typeof REPLY_KINDS)[number];

/** An agent's reply, as an assistant message presents it. */
export interface AskedReply {
  content: string;
  sources: { source_id: string; url: string | null }[];
  /** The message's outcome; absent where a message object does not carry one. */
  outcome?: string | null;
  streamed: boolean;
}

/**
 * The kind of a reply: its `outcome`. Where a message carries none (a message object of an older service), a
 * reply that cites sources counts as answered and one without as unanswered.
 */
export function replyKind(reply: Pick<AskedReply, 'outcome' | 'sources'>): ReplyKind {
  if (reply.outcome) return reply.outcome as ReplyKind;
  return reply.sources.length > 0 ? 'answered' : 'unanswered';
}

/** Asks `text` of an agent of the workspace; one asker serves every agent of it. */
export type Ask = (chatbotId: string, text: string) => Promise<AskedReply>;

/** An asker over the service's database, answering with `llm` (the builtin provider by default). */
export function createAsker(db: Kysely<Database>, workspaceId: string, llm: LlmConfig = loadConfig({}).llm): Ask {
  const engine = createReplyEngine({ db, llm, logger: { warn: () => {}, info: () => {} }, knowledge: createKnowledgeSearch(null, { warn: () => {} }) });
  const chatbots = new Map<string, ReplyInput['chatbot']>();
  return async (chatbotId, text) => {
    let chatbot = chatbots.get(chatbotId);
    if (!chatbot) {
      chatbot = await db.selectFrom('chatbots').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', chatbotId).executeTakeFirstOrThrow();
      chatbots.set(chatbotId, chatbot);
    }
    const at = new Date().toISOString();
    const message = { id: 'msg_eval', workspace_id: workspaceId, conversation_id: 'conv_eval', chatbot_id: chatbotId, role: 'user', content: text, author_type: 'visitor', author_id: null, created_at: at };
    let deltas: string[] = [];
    const output = await engine.reply({
      workspaceId, chatbot, transcript: [message] as unknown as ReplyInput['transcript'],
      onDelta: (delta) => deltas.push(delta), onReset: () => (deltas = []),
    });
    return {
      content: output.content,
      sources: output.sources.map((source) => ({ source_id: source.source_id, url: source.url })),
      outcome: output.outcome,
      streamed: deltas.join('') === output.content,
    };
  };
}

/** The engine's label: `builtin`, or `provider:model`. */
export const engineLabel = (llm: LlmConfig) => (llm.provider === 'builtin' ? 'builtin' : `${llm.provider}:${llm.model}`);

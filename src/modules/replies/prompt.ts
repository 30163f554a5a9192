import type { ModelMessage } from 'ai';
import type { LlmConfig } from '../../config.js';
import { parseJson } from '../../lib/json.js';
import type { KnowledgeEntry } from '../knowledge/repository.js';
import { contactFieldsText, leadCaptureOf } from './answers.js';
import type { KnowledgeHit } from '../knowledge/chunks.js';
import type { KnowledgeLookup, MessageSource, ReplyInput } from './engine.js';

/** What a model is asked: the system message and the conversation so far; and the documents it was given. */
export interface ReplyPrompt {
  system: string;
  messages: ModelMessage[];
  sources: MessageSource[];
}

/** How many of the latest visitor messages the knowledge search looks at (follow-ups lean on earlier ones). */
const SEARCHED_VISITOR_MESSAGES = 3;

/**
 * The knowledge that goes into a prompt: the best chunks of the agent's sources for the visitor's latest
 * messages (retrieval over every source: websites, files, text, Q&A and the `knowledge` field's entries),
 * topped up with the `knowledge` field's other entries when the agent has no more than the configured number.
 */
export async function relevantKnowledge(knowledge: KnowledgeLookup, llm: LlmConfig, input: ReplyInput): Promise<{ entries: KnowledgeEntry[]; sources: MessageSource[] }> {
  if (llm.knowledgeEntries === 0) return { entries: [], sources: [] };
  const question = input.transcript
    .filter((message) => message.role === 'user')
    .slice(-SEARCHED_VISITOR_MESSAGES)
    .map((message) => message.content)
    .join('\n');
  const hits = await knowledge(input.workspaceId, input.chatbot.id, question, llm.knowledgeEntries);
  const found: KnowledgeEntry[] = hits.map((hit) => ({ title: hit.title, content: hit.content }));
  const sources = sourcesOf(hits);
  const entries = parseJson<KnowledgeEntry[]>(input.chatbot.knowledge, []);
  if (entries.length > llm.knowledgeEntries) return { entries: found, sources };
  // A few hand-written entries all go in (as before sources), the matching ones first.
  const seen = new Set(found.map((entry) => `${entry.title}\n${entry.content}`));
  const rest = entries.filter((entry) => !seen.has(`${entry.title}\n${entry.content}`));
  return { entries: [...found, ...rest].slice(0, Math.max(llm.knowledgeEntries, entries.length)), sources };
}

/** The system message: the agent's instructions first, then how to use the knowledge, then the knowledge. */
export function systemMessage(input: Pick<ReplyInput, 'chatbot'>, knowledge: readonly KnowledgeEntry[]): string {
  const parts = [input.chatbot.instructions.trim() || 'You are a helpful assistant on a business website.'];
  const rules = ["Answer the visitor's questions from the knowledge below. When it does not contain the answer, say that you do not know instead of guessing."];
  const leadCapture = leadCaptureOf(input.chatbot);
  if (leadCapture.enabled) {
    rules.push(`When you cannot help, or the visitor wants to be contacted, ask for their ${contactFieldsText(leadCapture.fields)}.`);
    if (leadCapture.prompt) rules.push(`To ask for contact details, say: ${leadCapture.prompt}`);
  }
  parts.push(rules.join(' '));
  if (knowledge.length > 0) {
    parts.push(['Knowledge:', ...knowledge.map((entry) => `## ${entry.title}\n${entry.content}`)].join('\n\n'));
  } else {
    parts.push('Knowledge: none is relevant to this conversation.');
  }
  return parts.join('\n\n');
}

/**
 * The latest messages as model turns. A human operator speaks for the business, so their messages are
 * assistant turns too: the model continues the conversation as it stands.
 */
export function transcriptMessages(input: Pick<ReplyInput, 'transcript'>, limit: number): ModelMessage[] {
  return input.transcript
    .slice(-limit)
    .filter((message) => message.content.trim() !== '')
    .map((message) => (message.role === 'user' ? { role: 'user', content: message.content } : { role: 'assistant', content: message.content }));
}

/** Builds the prompt of a reply: instructions and relevant knowledge as the system message, then the transcript. */
export async function buildPrompt(knowledge: KnowledgeLookup, llm: LlmConfig, input: ReplyInput): Promise<ReplyPrompt> {
  const { entries, sources } = await relevantKnowledge(knowledge, llm, input);
  return { system: systemMessage(input, entries), messages: transcriptMessages(input, llm.historyMessages), sources };
}

/** The documents of retrieved chunks, once each, best first. */
export function sourcesOf(hits: readonly KnowledgeHit[]): MessageSource[] {
  const seen = new Set<string>();
  const sources: MessageSource[] = [];
  for (const hit of hits) {
    if (seen.has(hit.documentId)) continue;
    seen.add(hit.documentId);
    sources.push({ source_id: hit.sourceId, document_id: hit.documentId, title: hit.title, url: hit.url });
  }
  return sources;
}

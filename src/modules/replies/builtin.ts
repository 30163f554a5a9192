import { setImmediate as nextTurn } from 'node:timers/promises';
import { isGreeting } from '../knowledge/terms.js';
import { contactRequest, leadCaptureOf } from './answers.js';
import type { KnowledgeLookup, ReplyInput } from './engine.js';
import { sourcesOf } from './prompt.js';
import { GenerationAborted, type Generated, type ReplyProvider } from './provider.js';

/** About how many pieces an answer is streamed in, so the widget shows it arriving like a model's. */
const CHUNKS = 4;

/** The answer the built-in provider gives to the visitor's latest message. */
export async function builtinAnswer(knowledge: KnowledgeLookup, input: ReplyInput): Promise<Generated> {
  const question = input.transcript.findLast((message) => message.role === 'user')?.content ?? '';
  if (isGreeting(question)) return { content: 'Hello! What would you like to know?', sources: [], outcome: 'conversational' };
  // Only the best chunk: a second one is as likely to confuse as to help, without a model to merge them.
  const hits = await knowledge(input.workspaceId, input.chatbot.id, question, 1);
  const [best] = hits;
  if (best) return { content: `Here is what I found:\n\n${best.title}\n${best.content}`, sources: sourcesOf(hits), outcome: 'answered' };
  const leadCapture = leadCaptureOf(input.chatbot);
  const decline = "I'm sorry, I don't know the answer to that.";
  return { content: leadCapture.enabled ? `${decline} ${contactRequest(leadCapture)}` : decline, sources: [], outcome: 'unanswered' };
}

/** Splits text into about `count` pieces at spaces (the pieces join back to the text). */
export function chunksOf(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      const space = text.indexOf(' ', end);
      end = space === -1 ? text.length : space + 1;
    }
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

/**
 * Answers without any network: the agent's best-matching knowledge chunk (knowledge sources' retrieval),
 * else "I don't know" (asking for contact details when lead capture is on).
 */
export function builtinProvider(knowledge: KnowledgeLookup): ReplyProvider {
  return {
    source: () => 'builtin',
    async generate(request) {
      const generated = await builtinAnswer(knowledge, request.input);
      for (const chunk of chunksOf(generated.content, CHUNKS)) {
        if (request.signal.aborted) throw new GenerationAborted('the answer was aborted');
        request.emit(chunk);
        await nextTurn();
      }
      return generated;
    },
  };
}

import { setImmediate as nextTurn } from 'node:timers/promises';
import { detectLanguage } from '../knowledge/analyzer.js';
import { contactRequest, handoffAnswer, leadCaptureOf } from './answers.js';
import { composeAnswer } from './compose.js';
import type { KnowledgeLookup, ReplyInput } from './engine.js';
import { intentOf, LANGS, type Lang } from './intents.js';
import { phrase } from './phrases.js';
import { GenerationAborted, type Generated, type ReplyProvider } from './provider.js';

/** About how many pieces an answer is streamed in, so the widget shows it arriving like a model's. */
const CHUNKS = 4;
/** Chunks retrieved for an answer (composeAnswer weighs the first few). */
const ANSWER_HITS = 5;

/** The language of the agent's own words in a reply: the turn's, the question's, the knowledge's, the agent's, else English. */
function replyLanguage(input: ReplyInput, question: string, hit: { language: string } | undefined): Lang {
  const known = (language: string | undefined): language is Lang => (LANGS as readonly string[]).includes(language ?? '');
  const detected = detectLanguage(question);
  if (known(detected)) return detected;
  if (known(hit?.language)) return hit.language;
  const agent = (input.chatbot as { language?: string }).language;
  return known(agent) ? agent : 'en';
}

/**
 * The answer the built-in provider gives to the visitor's latest message: small talk and requests for a
 * person in the visitor's language; else the sentences of the knowledge that answer the question, with their
 * source; else a plain "I don't know" (offering to take contact details when lead capture is on).
 */
export async function builtinAnswer(knowledge: KnowledgeLookup, input: ReplyInput): Promise<Generated> {
  const question = input.transcript.findLast((message) => message.role === 'user')?.content ?? '';
  const leadCapture = leadCaptureOf(input.chatbot);
  const turn = intentOf(question);
  if (turn?.intent === 'handoff') {
    return { content: handoffAnswer(input.chatbot, input.contactKnown ?? false, turn.language), sources: [], outcome: 'handoff' };
  }
  if (turn) return { content: phrase(turn.intent, turn.language, { name: input.chatbot.name }), sources: [], outcome: 'conversational' };
  const hits = await knowledge(input.workspaceId, input.chatbot.id, question, ANSWER_HITS);
  const composed = composeAnswer(question, hits);
  if (composed) return { ...composed, outcome: 'answered' };
  const language = replyLanguage(input, question, hits[0]);
  const decline = phrase('decline', language);
  return { content: leadCapture.enabled ? `${decline} ${contactRequest(leadCapture, language)}` : decline, sources: [], outcome: 'unanswered' };
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

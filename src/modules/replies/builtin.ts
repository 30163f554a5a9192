import { setImmediate as nextTurn } from 'node:timers/promises';
import { contactRequest, handoffAnswer, leadCaptureOf } from './answers.js';
import { bestMatches, bestMatchesList } from './best-matches.js';
import { composeAnswer } from './compose.js';
import type { KnowledgeLookup, ReplyInput } from './engine.js';
import { intentOf, type Lang } from './intents.js';
import { expectedLanguages, replyLanguage } from './language.js';
import { phrase } from './phrases.js';
import { GenerationAborted, type Generated, type ReplyProvider } from './provider.js';

/** About how many pieces an answer is streamed in, so the widget shows it arriving like a model's. */
const CHUNKS = 4;
/** Chunks retrieved for an answer (composeAnswer weighs the first few). */
const ANSWER_HITS = 5;

/** What closes a reply that did not answer: the agent's request for contact details when lead capture is on, else the offer of a person. */
function offerOfHelp(input: ReplyInput, language: Lang): string {
  const leadCapture = leadCaptureOf(input.chatbot);
  return leadCapture.enabled ? contactRequest(leadCapture, language) : phrase('offer', language);
}

/**
 * The answer the built-in provider gives to the visitor's latest message: small talk and requests for a
 * person in the visitor's language; else, by confidence, the sentences of the knowledge that answer the
 * question with their source (`answered`), the pages that may help (`best_matches`), or a plain decline
 * (`unanswered`); the last two offer a person, or ask for contact details when lead capture is on.
 */
export async function builtinAnswer(knowledge: KnowledgeLookup, input: ReplyInput): Promise<Generated> {
  const question = input.transcript.findLast((message) => message.role === 'user')?.content ?? '';
  const turn = intentOf(question);
  if (turn?.intent === 'handoff') {
    return { content: handoffAnswer(input.chatbot, input.contactKnown ?? false, turn.language), sources: [], outcome: 'handoff', confidence: null };
  }
  if (turn) return { content: phrase(turn.intent, turn.language, { name: input.chatbot.name }), sources: [], outcome: 'conversational', confidence: null };
  const hints = { agent: input.chatbot.language, locale: input.locale };
  const hits = await knowledge(input.workspaceId, input.chatbot.id, question, ANSWER_HITS, { languages: expectedLanguages(hints) });
  const composed = composeAnswer(question, hits);
  if (composed) return { ...composed, outcome: 'answered' };
  const language = replyLanguage(question, { ...hints, knowledge: hits.map((hit) => hit.language) });
  const confidence = Math.max(0, ...hits.map((hit) => hit.confidence));
  const matches = bestMatches(question, hits);
  if (matches.length > 0) {
    const content = `${phrase('unsure', language)}\n\n${bestMatchesList(matches)}\n\n${offerOfHelp(input, language)}`;
    return { content, sources: matches.map((match) => match.source), outcome: 'best_matches', confidence };
  }
  return { content: `${phrase('decline', language)} ${offerOfHelp(input, language)}`, sources: [], outcome: 'unanswered', confidence };
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

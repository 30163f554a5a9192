import type { Db } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import type { MessageRow } from '../messages/repository.js';
import { unansweredRepository } from './unanswered-repository.js';

/** Longest question text kept (a visitor message may be 10,000 characters; the owner needs the gist). */
const MAX_QUESTION = 2000;

/**
 * The text that groups a question's wordings: lowercased, accents folded, punctuation and symbols
 * stripped, whitespace collapsed ("What is X?" and "what is x" are one question).
 */
export function normalizeQuestion(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** Records a question the agent could not answer from its knowledge, in the transaction storing that answer. */
export async function recordUnanswered(trx: Db, answer: MessageRow, question: string): Promise<void> {
  const text = question.trim().slice(0, MAX_QUESTION);
  await unansweredRepository.insert(trx, {
    id: newId('unansweredQuestion', Date.parse(answer.created_at)),
    workspace_id: answer.workspace_id,
    chatbot_id: answer.chatbot_id,
    conversation_id: answer.conversation_id,
    message_id: answer.id,
    question: text,
    normalized: normalizeQuestion(text),
    created_at: answer.created_at,
  });
}

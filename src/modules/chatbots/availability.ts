import { AppError } from '../../http/errors.js';

/** An agent that was published and then stopped. */
const STOPPED_STATUSES: readonly string[] = ['paused', 'archived'];

/**
 * Whether a conversation's agent still talks: takes visitor messages and leads, and answers (calling its
 * model). Not once it is paused or archived, so a stopped agent spends nothing. The dashboard preview
 * (channel `dashboard`) talks to an agent whatever its status; a draft has no other conversations (the
 * widget starts conversations with active agents only).
 */
export function agentTalks(chatbot: { status: string }, conversation: { channel: string }): boolean {
  return conversation.channel === 'dashboard' || !STOPPED_STATUSES.includes(chatbot.status);
}

/** Throws 409 `chatbot_not_active` when the conversation's agent no longer talks (see `agentTalks`). */
export function assertAgentTalks(chatbot: { status: string } | undefined, conversation: { channel: string }): void {
  if (chatbot && !agentTalks(chatbot, conversation)) {
    throw new AppError('chatbot_not_active', `This AI Agent is ${chatbot.status}: its conversations take no new visitor messages or contact details.`);
  }
}

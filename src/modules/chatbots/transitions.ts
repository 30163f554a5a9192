import { AppError } from '../../http/errors.js';
import type { ChatbotStatus } from './schema.js';

// draft → active ⇄ paused, and any non-archived state → archived (terminal).
const ALLOWED: Record<ChatbotStatus, readonly ChatbotStatus[]> = {
  draft: ['active', 'archived'],
  active: ['paused', 'archived'],
  paused: ['active', 'archived'],
  archived: [],
};

/** The states an agent in `from` may move to. */
export function allowedTransitions(from: ChatbotStatus): readonly ChatbotStatus[] {
  return ALLOWED[from];
}

/**
 * Checks a status change; throws 409 `invalid_status_transition` for a move the state machine forbids,
 * or for publishing an agent that has nothing to answer with (no instructions and no knowledge).
 */
export function assertTransition(from: ChatbotStatus, to: ChatbotStatus, publishable: { name: string; instructions: string; knowledgeCount: number }): void {
  if (from === to) return;
  if (!ALLOWED[from].includes(to)) {
    const allowed = ALLOWED[from];
    throw new AppError(
      'invalid_status_transition',
      `An AI Agent cannot move from "${from}" to "${to}"` + (allowed.length ? `; from "${from}" it can move to: ${allowed.join(', ')}.` : `; "${from}" is final.`),
      { from, to, allowed_transitions: [...allowed] },
    );
  }
  if (to === 'active' && (publishable.name.trim() === '' || (publishable.instructions.trim() === '' && publishable.knowledgeCount === 0))) {
    throw new AppError('invalid_status_transition', 'An AI Agent needs a name and instructions or knowledge before it can be published.', {
      from,
      to,
      allowed_transitions: [...ALLOWED[from]],
    });
  }
}

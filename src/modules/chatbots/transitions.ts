import { AppError } from '../../http/errors.js';
import type { ChatbotStatus } from './schema.js';

// draft → active ⇄ paused, and any non-archived state → archived (terminal).
const ALLOWED: Record<ChatbotStatus, readonly ChatbotStatus[]> = {
  draft: ['active', 'archived'],
  active: ['paused', 'archived'],
  paused: ['active', 'archived'],
  archived: [],
};

/** What publishing needs: a name, and instructions or knowledge to answer with. */
interface Publishable {
  name: string;
  instructions: string;
  /** `knowledge` entries and ready knowledge sources (websites, files, text, Q&A). */
  knowledgeCount: number;
}

function isPublishable(agent: Publishable): boolean {
  return agent.name.trim() !== '' && (agent.instructions.trim() !== '' || agent.knowledgeCount > 0);
}

/** The states an agent in `from` may move to now: `active` only when it has something to answer with. */
export function allowedTransitions(from: ChatbotStatus, agent: Publishable): ChatbotStatus[] {
  return ALLOWED[from].filter((to) => to !== 'active' || isPublishable(agent));
}

/**
 * Checks a status change; throws 409 `invalid_status_transition` for a move the state machine forbids,
 * or for publishing an agent that has nothing to answer with (no instructions and no knowledge). The
 * problem lists (`allowed_transitions`) and names only the moves that are open from the current state.
 */
export function assertTransition(from: ChatbotStatus, to: ChatbotStatus, agent: Publishable): void {
  if (from === to) return;
  const allowed = allowedTransitions(from, agent);
  if (allowed.includes(to)) return;
  const open = allowed.length > 0 ? `from "${from}" it can move to: ${allowed.join(', ')}.` : `"${from}" is final.`;
  const reason =
    ALLOWED[from].includes(to) && to === 'active'
      ? 'An AI Agent needs a name and instructions, knowledge entries or a ready knowledge source before it can be published'
      : 'The AI Agent cannot make this status change';
  throw new AppError('invalid_status_transition', `${reason}; ${open}`, { from, to, allowed_transitions: allowed });
}

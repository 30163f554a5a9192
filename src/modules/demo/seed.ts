import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { systemContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { createServices } from '../../services.js';

/** The ids the seeder created. */
export interface DemoSeedResult {
  chatbots: string[];
  conversations: string[];
  leads: string[];
}

const AGENTS = [
  {
    name: 'Front Desk',
    description: 'Answers questions about opening hours, location and bookings.',
    instructions: 'You are the friendly front desk of Harbour Dental. Answer briefly and offer to book an appointment.',
    knowledge: [
      { title: 'Opening hours', content: 'We are open Monday to Friday 8:00–18:00 and Saturday 9:00–13:00. Closed on Sundays.' },
      { title: 'Location', content: 'Harbour Dental, 12 Quay Street, second floor. Parking in the Quay garage.' },
    ],
    publish: 'active' as const,
  },
  {
    name: 'Sales Assistant',
    description: 'Qualifies leads for the enterprise plan.',
    instructions: 'Qualify the visitor: company size, use case, timeline. Ask for an email to follow up.',
    knowledge: [{ title: 'Pricing', content: 'Team plan 49 EUR per month; Enterprise plan on request with SSO and audit exports.' }],
    publish: 'active' as const,
  },
  { name: 'Support Bot (beta)', description: 'Not published yet.', instructions: 'Help with account questions.', knowledge: [], publish: 'draft' as const },
  {
    name: 'Holiday Campaign',
    description: 'Seasonal campaign agent, paused after the campaign.',
    instructions: 'Tell visitors about the holiday discount.',
    knowledge: [{ title: 'Discount', content: '20% off all whitening treatments until 31 December.' }],
    publish: 'paused' as const,
  },
];

const VISITORS = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Linus Pauling', 'Hedy Lamarr', null];
const QUESTIONS = [
  ['When are you open on Saturday?', 'On Saturday we are open from 9:00 to 13:00.'],
  ['Where can I park?', 'You can park in the Quay garage right next to us.'],
  ['How much is the team plan?', 'The Team plan is 49 EUR per month. Would you like a demo?'],
  ['Do you offer SSO?', 'Yes, single sign-on is part of the Enterprise plan.'],
  ['Can I book a cleaning next week?', 'I can take your details and the team will confirm a slot.'],
];

/**
 * Creates realistic sample data in a workspace: agents in several states, conversations spread over the
 * last 30 days with visitor, agent and operator messages, some closed, and leads. Writes go through the
 * services (so they are validated and recorded like any other write), with a clock moved back in time.
 */
export async function seedDemo(db: Kysely<Database>, clock: Clock, workspaceId: string): Promise<DemoSeedResult> {
  let at = clock.now().getTime() - 30 * 86_400_000;
  const step = (ms: number) => (at = Math.min(at + ms, clock.now().getTime()));
  const services = createServices({ db, clock: { now: () => new Date(at), monotonicMs: () => clock.monotonicMs() } });
  const ctx = systemContext(workspaceId, 'demo-seed');
  const result: DemoSeedResult = { chatbots: [], conversations: [], leads: [] };

  for (const agent of AGENTS) {
    const { chatbot } = await services.chatbots.create(ctx, {
      name: agent.name,
      description: agent.description,
      instructions: agent.instructions,
      knowledge: agent.knowledge,
      lead_capture: { enabled: true, fields: ['name', 'email'], prompt: 'Can I get your name and email so we can follow up?' },
      allowed_origins: ['https://example.com'],
    });
    if (agent.publish !== 'draft') await services.chatbots.update(ctx, chatbot.id, { status: 'active' });
    if (agent.publish === 'paused') await services.chatbots.update(ctx, chatbot.id, { status: 'paused' });
    result.chatbots.push(chatbot.id);
    step(60_000);
  }

  const live = result.chatbots.slice(0, 2);
  for (let i = 0; i < 24; i++) {
    step(27 * 3_600_000);
    const visitor = VISITORS[i % VISITORS.length] ?? null;
    const email = visitor ? `${visitor.toLowerCase().replace(/[^a-z]+/g, '.')}@example.com` : null;
    const conversation = await services.conversations.start(ctx, {
      chatbotId: live[i % live.length]!,
      channel: i % 5 === 0 ? 'api' : 'widget',
      visitor: { name: visitor, email },
    });
    result.conversations.push(conversation.id);
    const [question, answer] = QUESTIONS[i % QUESTIONS.length]!;
    await services.messages.append(ctx, conversation.id, { role: 'user', content: question!, author: { type: 'visitor', id: conversation.visitor.id } });
    step(4_000);
    await services.messages.append(ctx, conversation.id, { role: 'assistant', content: answer!, author: { type: 'agent', id: conversation.chatbot_id } });
    if (i % 4 === 1) {
      step(30_000);
      await services.messages.append(ctx, conversation.id, {
        role: 'operator',
        content: 'Hi, this is Sam from the team — happy to help further.',
        author: { type: 'user', id: 'demo-operator' },
      });
    }
    if (email && i % 3 === 0) {
      step(10_000);
      const { lead } = await services.leads.create(ctx, { conversation_id: conversation.id, name: visitor, email }, 'widget');
      result.leads.push(lead.id);
    }
    if (i % 3 === 2) await services.conversations.close(ctx, conversation.id);
  }

  step(3_600_000);
  const { lead } = await services.leads.create(ctx, { name: 'Imported Contact', phone: '+44 20 7946 0018', company: 'Quay Ventures', status: 'contacted' }, 'dashboard');
  result.leads.push(lead.id);
  return result;
}

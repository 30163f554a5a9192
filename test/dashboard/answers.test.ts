import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { startConversation, widget } from '../runtime/support.js';

// Issue 31 in the dashboard's API: the unanswered questions (the /api/v1 service and schema with the user as
// actor), the conversations waiting for a person, and the one-step Q&A source made from a question.
// The builtin engine answers from one text source; the parking question is not in it.
const UNKNOWN = 'Is there parking for bicycles?';

describe('dashboard: unanswered questions, handoff filter, Q&A from a question', () => {
  let t: TestApp;
  let owner: DashboardUser;
  let stranger: DashboardUser;
  let botId: string;
  let strangerBotId: string;
  let waitingId: string;

  async function ask(conversation: { conversation_id: string; visitor_token: string }, content: string) {
    const response = await widget(t.app, 'POST', `/widget/v1/conversations/${conversation.conversation_id}/messages`, { token: conversation.visitor_token, body: { content } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { reply: { content: string } | null };
  }

  async function makeAgent(user: DashboardUser, name: string): Promise<string> {
    const id = (await user.request('POST', '/app/api/chatbots', { name, instructions: 'Answer visitors of the bakery briefly.' })).json().id as string;
    const text = await user.request('POST', `/app/api/chatbots/${id}/sources`, {
      type: 'text',
      title: 'Opening hours',
      content: 'The bakery is open from 7am to 6pm, Monday to Saturday. Sourdough bread is baked every morning.',
    });
    expect(text.statusCode, text.body).toBe(201);
    const published = await user.request('PATCH', `/app/api/chatbots/${id}`, { status: 'active' });
    expect(published.statusCode, published.body).toBe(200);
    return id;
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUp(t.app, { workspaceName: 'Answers' });
    stranger = await signUp(t.app, { workspaceName: 'Elsewhere' });
    botId = await makeAgent(owner, 'Bakery helper');
    strangerBotId = await makeAgent(stranger, 'Other helper');

    const first = await startConversation(t.app, botId);
    await ask(first, UNKNOWN);
    await ask(first, 'When is the bakery open?');
    const second = await startConversation(t.app, botId);
    await ask(second, 'is there parking for bicycles');
    const handoff = await widget(t.app, 'POST', `/widget/v1/conversations/${second.conversation_id}/handoff`, { token: second.visitor_token });
    expect(handoff.statusCode, handoff.body).toBe(200);
    waitingId = second.conversation_id;
    // The other workspace's question must never show here.
    await ask(await startConversation(t.app, strangerBotId), 'Do you sell wedding cakes?');
  });
  afterAll(async () => t?.close());

  it('lists the unanswered questions grouped, with the /api/v1 shape; filtered by agent', async () => {
    const all = await owner.request('GET', '/app/api/analytics/unanswered');
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toEqual({
      object: 'list',
      data: [{ question: 'is there parking for bicycles', normalized: 'is there parking for bicycles', count: 2, last_asked_at: expect.stringMatching(/Z$/), chatbot_id: botId }],
    });
    const filtered = await owner.request('GET', `/app/api/analytics/unanswered?chatbot_id=${botId}&limit=5`);
    expect(filtered.json().data).toHaveLength(1);
    const summary = (await owner.request('GET', `/app/api/analytics?chatbot_id=${botId}`)).json();
    expect(summary.answers).toMatchObject({ answered: 1, unanswered: 2, handoffs: 1 });
  });

  it("answers 404 for another workspace's agent, 400 for bad input, 401 without a session", async () => {
    expectProblem(await owner.request('GET', `/app/api/analytics/unanswered?chatbot_id=${strangerBotId}`), 404, 'not_found');
    expectProblem(await stranger.request('GET', `/app/api/analytics/unanswered?chatbot_id=${botId}`), 404, 'not_found');
    expect((await stranger.request('GET', '/app/api/analytics/unanswered')).json().data.map((q: { question: string }) => q.question)).toEqual(['Do you sell wedding cakes?']);
    expectProblem(await owner.request('GET', '/app/api/analytics/unanswered?limit=0'), 400, 'validation_failed');
    expectProblem(await owner.request('GET', '/app/api/analytics/unanswered?from=yesterday'), 400, 'validation_failed');
    expectProblem(await t.app.inject({ method: 'GET', url: '/app/api/analytics/unanswered' }), 401, 'not_signed_in');
  });

  it('filters the conversation list to those waiting for a person', async () => {
    const waiting = await owner.request('GET', '/app/api/conversations?handoff=requested');
    expect(waiting.statusCode, waiting.body).toBe(200);
    expect(waiting.json().data.map((c: { id: string; handoff_requested_at: string | null; mode: string }) => [c.id, c.mode, typeof c.handoff_requested_at])).toEqual([[waitingId, 'agent', 'string']]);
    expect((await owner.request('GET', '/app/api/conversations')).json().data).toHaveLength(2);
    expectProblem(await owner.request('GET', '/app/api/conversations?handoff=yes'), 400, 'validation_failed');
  });

  it('refuses the Q&A write without the CSRF token; with it, the question is answered from then on', async () => {
    const qa = { type: 'qa', question: UNKNOWN, answer: 'Yes: there are bicycle racks by the front door.' };
    expectProblem(await owner.request('POST', `/app/api/chatbots/${botId}/sources`, qa, { 'x-csrf-token': '' }), 403, 'csrf_failed');
    expectProblem(await owner.request('POST', `/app/api/chatbots/${botId}/sources`, qa, { 'x-csrf-token': 'not-the-token' }), 403, 'csrf_failed');
    expectProblem(await owner.request('POST', `/app/api/chatbots/${botId}/sources`, qa, { origin: 'https://evil.example' }), 403, 'csrf_failed');
    expect((await owner.request('GET', `/app/api/chatbots/${botId}/sources`)).json().data).toHaveLength(1);

    const created = await owner.request('POST', `/app/api/chatbots/${botId}/sources`, qa);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ type: 'qa', status: 'ready', chatbot_id: botId });
    const answer = await ask(await startConversation(t.app, botId), UNKNOWN);
    expect(answer.reply?.content).toContain('bicycle racks');
  });
});

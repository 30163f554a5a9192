import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEAD_FIELDS } from '../../src/modules/chatbots/schema.js';
import { VisitorLeadBody } from '../../src/modules/runtime/schema.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot, startConversation, widget } from '../runtime/support.js';

// The lead form and the lead capture settings offer the same fields (issue 33 §6): lead capture could ask
// for `company`, but the widget's lead submission refused it. Every field lead capture offers is accepted
// end to end: settings → widget start → lead submission → the stored lead → the conversation's visitor.

let t: TestApp;
let tenant: Tenant;
let bot: { id: string };

beforeAll(async () => {
  t = await createTestApp({}, { replyWorker: false });
  tenant = await t.tenant();
  bot = await makeActiveChatbot(tenant, { lead_capture: { enabled: true, fields: ['name', 'email', 'company'], prompt: null } });
});
afterAll(() => t?.close());

describe('company, end to end', () => {
  it('is offered by lead capture, accepted from the widget, stored on the lead, and shown on the conversation', async () => {
    const started = await startConversation(t.app, bot.id);
    expect(started.chatbot.lead_capture).toMatchObject({ enabled: true, fields: ['name', 'email', 'company'] });
    const submitted = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/lead`, {
      token: started.visitor_token,
      body: { name: 'Ada Lovelace', email: 'ada@example.com', company: 'Analytical Engines Ltd' },
    });
    expect(submitted.statusCode, submitted.body).toBe(201);
    const lead = submitted.json();
    expect(lead).toMatchObject({ company: 'Analytical Engines Ltd', source: 'widget', conversation_id: started.conversation_id });
    expect((await tenant.request('GET', `/api/v1/leads/${lead.id}`)).json()).toMatchObject({ company: 'Analytical Engines Ltd' });

    // A second submission updates the same lead's company.
    const again = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/lead`, { token: started.visitor_token, body: { company: 'Difference Co' } });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json()).toMatchObject({ id: lead.id, company: 'Difference Co', email: 'ada@example.com' });
    expect((await tenant.request('GET', `/api/v1/conversations/${started.conversation_id}`)).json().visitor).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com' });
  });

  it('accepts every field lead capture can ask for, and still refuses others and bad values', async () => {
    const values: Record<(typeof LEAD_FIELDS)[number], string> = { name: 'Grace', email: 'grace@example.com', phone: '+1 555 0100', company: 'Navy' };
    for (const field of LEAD_FIELDS) {
      const started = await startConversation(t.app, bot.id);
      const body = { email: 'someone@example.com', [field]: values[field] };
      const response = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/lead`, { token: started.visitor_token, body });
      expect(response.statusCode, `${field}: ${response.body}`).toBe(201);
      expect(response.json()[field], field).toBe(field === 'email' ? values.email : values[field]);
    }
    const started = await startConversation(t.app, bot.id);
    const lead = (body: unknown) => widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/lead`, { token: started.visitor_token, body });
    expectProblem(await lead({ email: 'x@example.com', job_title: 'CTO' }), 400);
    expectProblem(await lead({ email: 'x@example.com', company: '' }), 400);
    expectProblem(await lead({ email: 'x@example.com', company: 'x'.repeat(201) }), 400);
  });

  it('the lead form\'s schema and the widget offer exactly the lead capture fields', async () => {
    expect(Object.keys(VisitorLeadBody.properties).sort()).toEqual([...LEAD_FIELDS].sort());
    // The widget draws an input for each field it knows; a field it does not know would be dropped from the form.
    const source = await readFile(new URL('../../widget/widget.js', import.meta.url), 'utf8');
    const known = /const LEAD_FIELDS = \{([^}]*)\}/.exec(source)?.[1] ?? '';
    for (const field of LEAD_FIELDS) expect(known, field).toMatch(new RegExp(`\\b${field}: \\[`));
  });
});

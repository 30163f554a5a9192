import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunksOf } from '../../src/modules/replies/builtin.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { conversationWith, engineWith, streamRecorder } from './support.js';

const HOURS = { title: 'Opening hours', content: 'We are open Monday to Friday, 9am to 5pm.' };
const RETURNS = { title: 'Returns', content: 'Unworn items can be returned within 30 days for a full refund.' };
const LEADS_ON = { enabled: true, fields: ['name', 'email'], prompt: null };

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
});
afterAll(async () => t?.close());

/** The built-in engine, as configured by default (no LLM_* variables at all). */
const builtin = () => engineWith(t, {});

describe('builtin provider', () => {
  it('answers a question from the matching knowledge entry, streamed in pieces', async () => {
    const { input } = await conversationWith(t, tenant, { knowledge: [RETURNS, HOURS] }, [['user', 'What are your opening hours?']]);
    const stream = streamRecorder();
    const output = await builtin().engine.reply({ ...input, ...stream });
    expect(output).toMatchObject({ fallback: false, source: 'builtin' });
    expect(output.content).toContain('Monday to Friday, 9am to 5pm');
    expect(output.content).not.toContain(RETURNS.content);
    expect(stream.deltas.length).toBeGreaterThan(1);
    expect(stream.deltas.join('')).toBe(output.content);
  });

  it('answers the latest question, not an earlier one', async () => {
    const { input } = await conversationWith(t, tenant, { knowledge: [RETURNS, HOURS] }, [
      ['user', 'What are your opening hours?'],
      ['assistant', 'We are open Monday to Friday, 9am to 5pm.'],
      ['user', 'And can I have a refund on a return?'],
    ]);
    const output = await builtin().engine.reply(input);
    expect(output.content).toContain(RETURNS.content);
    expect(output.content).not.toContain(HOURS.content);
  });

  it('declines a question its knowledge does not cover', async () => {
    const { input } = await conversationWith(t, tenant, { knowledge: [HOURS, RETURNS] }, [['user', 'Do you sell helicopters?']]);
    const output = await builtin().engine.reply(input);
    expect(output).toMatchObject({ content: "I'm sorry, I don't know the answer to that. You can also ask to talk to a person.", fallback: false, source: 'builtin', sources: [], outcome: 'unanswered' });
  });

  it('asks for contact details when it declines with lead capture on', async () => {
    const { input } = await conversationWith(t, tenant, { knowledge: [HOURS], lead_capture: LEADS_ON }, [['user', 'Do you sell helicopters?']]);
    const output = await builtin().engine.reply(input);
    expect(output.content).toBe("I'm sorry, I don't know the answer to that. If you leave your name and email address, someone from our team will get back to you.");
    // The agent's own wording wins.
    const custom = await conversationWith(t, tenant, { knowledge: [HOURS], lead_capture: { ...LEADS_ON, prompt: 'Leave your email and we will write back.' } }, [
      ['user', 'Do you sell helicopters?'],
    ]);
    expect((await builtin().engine.reply(custom.input)).content).toBe("I'm sorry, I don't know the answer to that. Leave your email and we will write back.");
  });

  it('does not answer greetings or small talk with a random entry', async () => {
    const { input } = await conversationWith(t, tenant, { knowledge: [HOURS, RETURNS] }, [['user', 'Hi!']]);
    expect((await builtin().engine.reply(input)).content).toBe('Hello! What would you like to know?');
    const smallTalk = await conversationWith(t, tenant, { knowledge: [HOURS, RETURNS] }, [['user', 'What do you do?']]);
    expect((await builtin().engine.reply(smallTalk.input)).content).toBe("I'm sorry, I don't know the answer to that. You can also ask to talk to a person.");
  });

  it('does not use another agent’s knowledge', async () => {
    await conversationWith(t, tenant, { knowledge: [HOURS] }, []);
    const { input } = await conversationWith(t, tenant, { knowledge: [RETURNS] }, [['user', 'What are your opening hours?']]);
    expect((await builtin().engine.reply(input)).content).toBe("I'm sorry, I don't know the answer to that. You can also ask to talk to a person.");
  });

  it('keeps the answer when the stream listener fails (a visitor closed the page)', async () => {
    const { input } = await conversationWith(t, tenant, { knowledge: [HOURS] }, [['user', 'What are your opening hours?']]);
    const output = await builtin().engine.reply({
      ...input,
      onDelta: () => {
        throw new Error('connection closed');
      },
    });
    expect(output).toMatchObject({ fallback: false, source: 'builtin' });
    expect(output.content).toContain(HOURS.content);
  });

  it('offers the pages that may help when no sentence is sure enough, then a person, or contact details with lead capture on', async () => {
    const loop = { title: 'Coastal Loop', content: 'The Coastal Loop leaves at 10:00 from the harbour and takes two hours.' };
    const question = 'Would the Coastal Loop suit my elderly grandmother with weak knees?';
    const { input } = await conversationWith(t, tenant, { knowledge: [loop, HOURS] }, [['user', question]]);
    const output = await builtin().engine.reply(input);
    expect(output.outcome).toBe('best_matches');
    expect(output.content).toBe(`I'm not sure, but these may help:\n\n- **Coastal Loop**: ${loop.content}\n\nYou can also ask to talk to a person.`);
    expect(output.sources).toEqual([expect.objectContaining({ title: 'Coastal Loop', url: null })]);
    expect(output.confidence).toBeGreaterThan(0);
    const withLeads = await conversationWith(t, tenant, { knowledge: [loop, HOURS], lead_capture: LEADS_ON }, [['user', question]]);
    expect((await builtin().engine.reply(withLeads.input)).content).toMatch(/\n\nIf you leave your name and email address, someone from our team will get back to you\.$/);
  });

  it('answers though a word of the question is one the knowledge never uses, or is misspelt once', async () => {
    const office = { title: 'Office', content: 'The office is open from 9am to 5pm on weekdays.' };
    for (const question of ['Wen is the office open?', 'When is the ofice open?', 'Is the office open for visitors on weekdays?']) {
      const { input } = await conversationWith(t, tenant, { knowledge: [office, RETURNS] }, [['user', question]]);
      const output = await builtin().engine.reply(input);
      expect(output, question).toMatchObject({ outcome: 'answered', content: office.content });
    }
  });

  it('splits an answer into pieces that join back to it', () => {
    for (const text of ['', 'one', 'Here is what I found: we are open Monday to Friday.', 'x'.repeat(50), ' lead and trail ']) {
      const pieces = chunksOf(text, 4);
      expect(pieces.join('')).toBe(text);
      expect(pieces.length).toBeLessThanOrEqual(4);
    }
  });
});

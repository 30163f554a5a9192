import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import type { Agent } from '../types';
import { Badge, CopyButton, ErrorText, PageHeader, useAction, useLoad } from '../ui';
import { AgentSources } from './AgentSources';
import { PreviewChat } from './PreviewChat';

const LEAD_FIELDS = ['name', 'email', 'phone', 'company'];

type Draft = Omit<Agent, 'id' | 'status' | 'created_at' | 'updated_at' | 'published_at' | 'temperature' | 'allowed_origins'> & {
  temperature: string;
  allowed_origins: string;
};

function toDraft(agent: Agent): Draft {
  return {
    name: agent.name,
    description: agent.description,
    instructions: agent.instructions,
    welcome_message: agent.welcome_message,
    model: agent.model,
    temperature: agent.temperature === null ? '' : String(agent.temperature),
    knowledge: agent.knowledge,
    lead_capture: agent.lead_capture,
    allowed_origins: agent.allowed_origins.join('\n'),
  };
}

function toBody(draft: Draft) {
  return {
    name: draft.name,
    description: draft.description || null,
    instructions: draft.instructions,
    welcome_message: draft.welcome_message || null,
    model: draft.model?.trim() || null,
    temperature: draft.temperature.trim() === '' ? null : Number(draft.temperature),
    knowledge: draft.knowledge,
    lead_capture: { ...draft.lead_capture, prompt: draft.lead_capture.prompt || null },
    allowed_origins: draft.allowed_origins.split(/\s+/).filter(Boolean),
  };
}

const TRANSITIONS: Record<Agent['status'], { to: Agent['status']; label: string; confirm?: string }[]> = {
  draft: [{ to: 'active', label: 'Publish' }],
  active: [{ to: 'paused', label: 'Pause' }, { to: 'archived', label: 'Archive', confirm: 'Archive this agent? It stops answering and can no longer be edited.' }],
  paused: [{ to: 'active', label: 'Resume' }, { to: 'archived', label: 'Archive', confirm: 'Archive this agent? It stops answering and can no longer be edited.' }],
  archived: [],
};

/** One agent: every field, its state (publish / pause / archive), the live preview and the embed snippet. */
export function AgentEditor({ id }: { id: string }) {
  const { session } = useSession();
  const loaded = useLoad(() => api<Agent>('GET', `/chatbots/${id}`), [id]);
  const [agent, setAgent] = useState<Agent>();
  const [draft, setDraft] = useState<Draft>();
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState<(typeof TRANSITIONS)['draft'][number] | null>(null);
  const save = useAction();
  const status = useAction();

  useEffect(() => {
    if (loaded.data) {
      setAgent(loaded.data);
      setDraft(toDraft(loaded.data));
    }
  }, [loaded.data]);

  if (loaded.error) {
    return (
      <>
        <p className="crumbs"><Link to="/agents">Agents</Link></p>
        <ErrorText error={loaded.error} />
        <Link to="/agents">Back to your agents</Link>
      </>
    );
  }
  if (!agent || !draft) return <p className="loading">Loading…</p>;
  const readOnly = agent.status === 'archived';
  const set = (changes: Partial<Draft>) => {
    setSaved(false);
    setDraft({ ...draft, ...changes });
  };

  async function submit(event: FormEvent) {
    event.preventDefault();
    const updated = await save.run(() => api<Agent>('PATCH', `/chatbots/${id}`, toBody(draft!)));
    if (updated) {
      setAgent(updated);
      setDraft(toDraft(updated));
      setSaved(true);
    }
  }
  async function move(to: Agent['status']) {
    setConfirming(null);
    const updated = await status.run(() => api<Agent>('PATCH', `/chatbots/${id}`, { ...toBody(draft!), status: to }));
    if (updated) {
      setAgent(updated);
      setDraft(toDraft(updated));
    }
  }
  const snippet = `<script src="${session.public_url}/widget.js" data-chatbot-id="${agent.id}" async></script>`;

  return (
    <>
      <p className="crumbs">
        <Link to="/agents">Agents</Link> / {agent.name}
      </p>
      <PageHeader title={agent.name}>
        <Badge value={agent.status} />
        {TRANSITIONS[agent.status].map((t) => (
          <button key={t.to} type="button" className={t.to === 'archived' ? 'danger' : ''} disabled={status.busy} onClick={() => (t.confirm ? setConfirming(t) : void move(t.to))}>
            {t.label}
          </button>
        ))}
      </PageHeader>
      {confirming ? (
        <div className="card confirm" role="alertdialog" aria-labelledby="confirm-text">
          <p id="confirm-text">{confirming.confirm}</p>
          <div className="row">
            <button type="button" className="danger" onClick={() => void move(confirming.to)}>
              Confirm {confirming.label.toLowerCase()}
            </button>
            <button type="button" className="secondary" autoFocus onClick={() => setConfirming(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <ErrorText error={status.error} />
      {agent.status === 'draft' ? <p className="hint">This agent is a draft: only you can talk to it, in the preview. Publish it to put it on your website.</p> : null}

      <div className="editor">
        <form className="card stack" onSubmit={submit} aria-label="Agent settings">
          <fieldset disabled={readOnly} className="stack">
            <label>
              Name
              <input required maxLength={200} value={draft.name} onChange={(e) => set({ name: e.target.value })} />
            </label>
            <label>
              Description
              <input maxLength={1000} value={draft.description ?? ''} onChange={(e) => set({ description: e.target.value })} />
            </label>
            <label>
              Instructions
              <textarea rows={5} maxLength={20000} aria-describedby="instructions-hint" value={draft.instructions} onChange={(e) => set({ instructions: e.target.value })} />
            </label>
            <span id="instructions-hint" className="hint under">How the agent behaves: tone, what to help with, what to avoid.</span>
            <fieldset className="stack knowledge">
              <legend>Knowledge</legend>
              <p className="hint">Text the agent answers from: opening hours, prices, policies…</p>
              {draft.knowledge.map((entry, index) => (
                <div key={index} className="knowledge-entry stack">
                  <label>
                    Title
                    <input required maxLength={200} value={entry.title} onChange={(e) => set({ knowledge: draft.knowledge.map((k, i) => (i === index ? { ...k, title: e.target.value } : k)) })} />
                  </label>
                  <label>
                    Content
                    <textarea required rows={3} maxLength={20000} value={entry.content} onChange={(e) => set({ knowledge: draft.knowledge.map((k, i) => (i === index ? { ...k, content: e.target.value } : k)) })} />
                  </label>
                  <button type="button" className="secondary" onClick={() => set({ knowledge: draft.knowledge.filter((_, i) => i !== index) })}>
                    Remove entry {index + 1}
                  </button>
                </div>
              ))}
              <button type="button" className="secondary" onClick={() => set({ knowledge: [...draft.knowledge, { title: '', content: '' }] })}>
                Add knowledge entry
              </button>
            </fieldset>
            <div className="row">
              <label>
                Model
                <input maxLength={100} placeholder="service default" value={draft.model ?? ''} onChange={(e) => set({ model: e.target.value })} />
              </label>
              <label>
                Temperature
                <input type="number" min={0} max={2} step={0.1} placeholder="default" value={draft.temperature} onChange={(e) => set({ temperature: e.target.value })} />
              </label>
            </div>
            <label>
              Welcome message
              <input maxLength={1000} value={draft.welcome_message ?? ''} onChange={(e) => set({ welcome_message: e.target.value })} />
            </label>
            <fieldset className="stack">
              <legend>Lead capture</legend>
              <label className="inline">
                <input type="checkbox" checked={draft.lead_capture.enabled} onChange={(e) => set({ lead_capture: { ...draft.lead_capture, enabled: e.target.checked } })} />
                Ask visitors for their contact details
              </label>
              <div className="row" role="group" aria-label="Fields to ask for">
                {LEAD_FIELDS.map((field) => (
                  <label key={field} className="inline">
                    <input
                      type="checkbox"
                      checked={draft.lead_capture.fields.includes(field)}
                      onChange={(e) =>
                        set({ lead_capture: { ...draft.lead_capture, fields: e.target.checked ? [...draft.lead_capture.fields, field] : draft.lead_capture.fields.filter((f) => f !== field) } })
                      }
                    />
                    {field}
                  </label>
                ))}
              </div>
              <label>
                Lead prompt
                <input maxLength={500} value={draft.lead_capture.prompt ?? ''} onChange={(e) => set({ lead_capture: { ...draft.lead_capture, prompt: e.target.value } })} />
              </label>
            </fieldset>
            <label>
              Allowed origins
              <textarea rows={2} placeholder="https://www.example.com" aria-describedby="origins-hint" value={draft.allowed_origins} onChange={(e) => set({ allowed_origins: e.target.value })} />
            </label>
            <span id="origins-hint" className="hint under">One per line: the websites where the chat widget may run.</span>
            <ErrorText error={save.error} />
            <div className="row">
              <button type="submit" disabled={save.busy}>
                Save changes
              </button>
              <span role="status">{saved ? 'Saved.' : ''}</span>
            </div>
          </fieldset>
        </form>

        <div className="stack side">
          <PreviewChat agentId={agent.id} welcome={agent.welcome_message} />
          <section className="card stack" aria-labelledby="embed-title">
            <h2 id="embed-title">Add to your website</h2>
            <p className="hint">Paste this before &lt;/body&gt; on your site{agent.status === 'active' ? '.' : ' (it answers once the agent is published).'}</p>
            <pre className="snippet" aria-label="Embed snippet">
              <code>{snippet}</code>
            </pre>
            <CopyButton text={snippet} label="Copy snippet" />
            {agent.allowed_origins.length === 0 && (
              <p className="notice">
                Add your website&apos;s address (for example https://www.example.com) under <strong>Allowed origins</strong>: the widget answers only on the
                sites listed there. The hosted chat page below works without it.
              </p>
            )}
            <p className="hint">
              Or share the hosted chat page: <a href={`${session.public_url}/chat/${agent.id}`}>{`${session.public_url}/chat/${agent.id}`}</a>
            </p>
          </section>
        </div>
      </div>
      <AgentSources agentId={agent.id} readOnly={readOnly} />
    </>
  );
}

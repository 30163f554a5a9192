import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api';
import { Link, useHash, useUnsavedChanges } from '../router';
import { useSession } from '../session';
import type { Agent } from '../types';
import { useApi } from '../queries';
import { Badge, ErrorText, PageHeader, useAction } from '../ui';
import { AgentSources } from './AgentSources';
import { PreviewChat } from './PreviewChat';
import { BehaviourSection, KnowledgeFields } from './agent/BehaviourSection';
import { lines, sectionOf, SECTIONS, toBody, toDraft, TRANSITIONS, type Draft, type Section } from './agent/draft';
import { InstallSection } from './agent/InstallSection';
import { LeadCaptureSection } from './agent/LeadCaptureSection';
import { WidgetPreview } from './agent/WidgetPreview';
import { WidgetSection } from './agent/WidgetSection';

/** The tabs of the editor: links to `#section`, so each section has an address and back/forward work. */
function SectionNav({ current, dirty }: { current: Section; dirty: boolean }) {
  return (
    <nav className="subnav tabs" aria-label="Agent sections">
      <ul>
        {SECTIONS.map(([id, label]) => (
          <li key={id}>
            <a href={`#${id}`} aria-current={id === current ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
      {dirty ? <p className="unsaved" role="status">Unsaved changes</p> : null}
    </nav>
  );
}

/** One agent in sections (Behaviour, Sources, Widget, Lead capture, Install), its state and a preview. */
export function AgentEditor({ id }: { id: string }) {
  const { session } = useSession();
  const section = sectionOf(useHash());
  const loaded = useApi<Agent>(`/chatbots/${id}`);
  const agent = loaded.data;
  const [draft, setDraft] = useState<Draft>();
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState<(typeof TRANSITIONS)['draft'][number] | null>(null);
  // A save refetches the agent (and the agents list), which resets the draft to what was saved.
  const save = useAction('/chatbots');
  const status = useAction('/chatbots');
  const dirty = !!agent && !!draft && JSON.stringify(draft) !== JSON.stringify(toDraft(agent));
  useUnsavedChanges(dirty);

  // The cache hands back the same object for an unchanged agent, so only a real change resets the draft.
  useEffect(() => {
    if (agent) setDraft(toDraft(agent));
  }, [agent]);

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
  const done = (updated: Agent | undefined) => {
    if (!updated) return false;
    setDraft(toDraft(updated));
    return true;
  };

  async function submit(event: FormEvent) {
    event.preventDefault();
    setSaved(done(await save.run(() => api<Agent>('PATCH', `/chatbots/${id}`, toBody(draft!)))));
  }
  async function move(to: Agent['status']) {
    setConfirming(null);
    done(await status.run(() => api<Agent>('PATCH', `/chatbots/${id}`, { ...toBody(draft!), status: to })));
  }

  const fields = {
    behaviour: <BehaviourSection draft={draft} set={set} />,
    sources: <KnowledgeFields draft={draft} set={set} />,
    widget: <WidgetSection draft={draft} set={set} />,
    'lead-capture': <LeadCaptureSection draft={draft} set={set} />,
    install: null,
  }[section];
  const side =
    section === 'widget' ? (
      <WidgetPreview name={draft.name} welcome={draft.welcome_message} questions={lines(draft.suggested_questions).slice(0, 6)} language={draft.language} appearance={draft.appearance} />
    ) : (
      <PreviewChat agentId={agent.id} welcome={agent.welcome_message} />
    );

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
      <SectionNav current={section} dirty={dirty} />

      <div className="editor">
        <div className="stack">
          {fields ? (
            <form className="card stack" onSubmit={submit} aria-label="Agent settings">
              <fieldset disabled={readOnly} className="stack">
                {fields}
                <ErrorText error={save.error} />
                <div className="row">
                  <button type="submit" disabled={save.busy}>
                    Save changes
                  </button>
                  <span role="status">{saved ? 'Saved.' : ''}</span>
                </div>
              </fieldset>
            </form>
          ) : (
            <InstallSection agent={agent} publicUrl={session.public_url} />
          )}
          {section === 'sources' ? <AgentSources agentId={agent.id} readOnly={readOnly} /> : null}
        </div>
        <div className="stack side">{side}</div>
      </div>
    </>
  );
}

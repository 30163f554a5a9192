import { api } from '../api';
import { Link } from '../router';
import { isAdmin, useSession } from '../session';
import type { Agent, Page } from '../types';
import { useLoad } from '../ui';

/** Home: guides a new workspace from its first agent to an API key, step by step. */
export function Home() {
  const { session } = useSession();
  const agents = useLoad(() => api<Page<Agent>>('GET', '/chatbots?limit=100'), []);
  const list = agents.data?.data ?? [];
  const first = list[list.length - 1];
  const published = list.some((a) => a.status === 'active');
  const steps = [
    { done: list.length > 0, title: 'Create your first agent', text: 'Give it a name and instructions, and add what it should know.', action: list.length ? null : <Link className="button" to="/agents?new=1">Create your first agent</Link> },
    { done: published, title: 'Publish it', text: 'Try it in the preview chat while it is a draft, then publish it so visitors can talk to it.', action: first && !published ? <Link className="button" to={`/agents/${first.id}`}>Open {first.name}</Link> : null },
    { done: false, title: 'Put it on your website', text: 'Copy the one-line embed snippet from the agent page into your site.', action: first ? <Link to={`/agents/${first.id}`}>Get the snippet</Link> : null },
    ...(isAdmin(session)
      ? [{ done: false, title: 'Connect your systems', text: 'Create an API key with the scopes you need under Settings → Developers.', action: <Link to="/settings/developers">Create an API key</Link> }]
      : []),
  ];
  return (
    <>
      <h1>Welcome to {session.workspace.name}</h1>
      <p className="lead">Here is how to get an AI agent talking to your visitors.</p>
      {agents.loading ? <p className="loading">Loading…</p> : null}
      <ol className="steps">
        {steps.map((step) => (
          <li key={step.title} className={step.done ? 'done' : ''}>
            <span className="check" aria-hidden="true">{step.done ? '✓' : ''}</span>
            <div>
              <h2>
                {step.title}
                {step.done ? <span className="sr-only"> (done)</span> : null}
              </h2>
              <p>{step.text}</p>
              {step.action}
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}

import type { ReactNode } from 'react';
import { Link } from '../router';
import { useSession } from '../session';
import { useApi } from '../queries';

/** GET /app/api/home (src/dashboard/routes/home.ts): the checklist from the workspace's real state, and its week. Dashboard-only, so not in the /api/v1 document. */
interface HomeSummary {
  agent: { id: string; name: string; status: string } | null;
  steps: { agent_created: boolean; source_synced: boolean; agent_published: boolean; website_traffic: boolean; api_key: boolean | null };
  last_7_days: { from: string; conversations: number; messages: number; leads: number; answer_rate: number | null };
}

interface Step {
  done: boolean;
  title: string;
  text: string;
  action: ReactNode;
}

function stepsOf({ agent, steps }: HomeSummary): Step[] {
  const open = (section: string, label: string) => (agent ? <Link to={`/agents/${agent.id}#${section}`}>{label}</Link> : null);
  return [
    {
      done: steps.agent_created,
      title: 'Create your first agent',
      text: 'Give it a name and instructions.',
      action: agent ? null : <Link className="button" to="/agents?new=1">Create your first agent</Link>,
    },
    {
      done: steps.source_synced,
      title: 'Teach it your business',
      text: 'Add your website, files, texts or questions and answers as sources: it answers from them.',
      action: steps.source_synced ? null : open('sources', 'Add a source'),
    },
    {
      done: steps.agent_published,
      title: 'Publish it',
      text: 'Try it in the preview chat while it is a draft, then publish it so visitors can talk to it.',
      action: steps.agent_published || !agent ? null : <Link className="button" to={`/agents/${agent.id}`}>Open {agent.name}</Link>,
    },
    {
      done: steps.website_traffic,
      title: 'Put it on your website',
      text: 'Copy the one-line snippet into your site and list its address under allowed origins. This ticks when the first visitor chats.',
      action: steps.website_traffic ? null : open('install', 'Get the snippet'),
    },
    ...(steps.api_key === null
      ? []
      : [
          {
            done: steps.api_key,
            title: 'Connect your systems',
            text: 'Create an API key with the scopes you need under Settings → Developers.',
            action: steps.api_key ? null : <Link to="/settings/developers">Create an API key</Link>,
          },
        ]),
  ];
}

// The steps' titles keep the size and spacing they had as h2s (styles.css sizes h2 only), now under a section's h2.
const STEP_TITLE = { fontSize: '1.1rem', margin: '0 0 .5rem' };

const percent = (rate: number | null) => (rate === null ? '–' : `${Math.round(rate * 100)}%`);

/** Home: the steps from a new workspace to an agent on a website (ticked from the real state), and the last 7 days. */
export function Home() {
  const { session } = useSession();
  const home = useApi<HomeSummary>('/home');
  const summary = home.data;
  const steps = summary ? stepsOf(summary) : [];
  const remaining = steps.filter((step) => !step.done).length;
  // Until every step is done the checklist comes first; then the week does.
  const week = summary ? (
    <section aria-labelledby="week-title">
      <h2 id="week-title">Last 7 days</h2>
      <dl className="totals">
        <div className="card"><dt>Conversations</dt><dd>{summary.last_7_days.conversations}</dd></div>
        <div className="card"><dt>Messages</dt><dd>{summary.last_7_days.messages}</dd></div>
        <div className="card"><dt>Leads</dt><dd>{summary.last_7_days.leads}</dd></div>
        <div className="card"><dt>Answer rate</dt><dd>{percent(summary.last_7_days.answer_rate)}</dd></div>
      </dl>
      <p className="hint">
        Since {summary.last_7_days.from}, today included. <Link to="/analytics">All analytics</Link>
      </p>
    </section>
  ) : null;
  const checklist = (
    <section aria-labelledby="steps-title">
      <h2 id="steps-title">{remaining === 0 ? 'Getting started: all done' : `Getting started: ${steps.length - remaining} of ${steps.length} done`}</h2>
      <ol className="steps">
        {steps.map((step) => (
          <li key={step.title} className={step.done ? 'done' : ''}>
            <span className="check" aria-hidden="true">{step.done ? '✓' : ''}</span>
            <div>
              <h3 style={STEP_TITLE}>
                {step.title}
                {step.done ? <span className="sr-only"> (done)</span> : null}
              </h3>
              <p>{step.text}</p>
              {step.action}
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
  return (
    <>
      <h1>Welcome to {session.workspace.name}</h1>
      {home.error ? <p className="error" role="alert">{home.error.message}</p> : null}
      {!summary ? <p className="loading">Loading…</p> : null}
      {summary ? (
        <>
          <p className="lead">
            {remaining === 0 ? 'Your agent is live: here is how it went this week.' : 'Here is how to get an AI agent talking to your visitors.'}
          </p>
          {remaining === 0 ? (
            <>
              {week}
              {checklist}
            </>
          ) : (
            <>
              {checklist}
              {week}
            </>
          )}
        </>
      ) : null}
    </>
  );
}

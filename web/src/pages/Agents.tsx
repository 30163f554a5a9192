import { useState, type FormEvent } from 'react';
import { api, when } from '../api';
import { Link, navigate } from '../router';
import type { Agent } from '../types';
import { Badge, ErrorText, PageHeader, useAction } from '../ui';
import { useAgents } from './Conversations';

/** The workspace's agents, and the form that creates a draft. */
export function Agents() {
  const agents = useAgents();
  const [creating, setCreating] = useState(new URLSearchParams(window.location.search).has('new'));
  const [name, setName] = useState('');
  const { busy, error, run } = useAction('/chatbots');
  async function create(event: FormEvent) {
    event.preventDefault();
    const agent = await run(() => api<Agent>('POST', '/chatbots', { name, instructions: 'You are a friendly assistant for our website visitors. Answer briefly and offer to take contact details when you cannot help.' }));
    if (agent) navigate(`/agents/${agent.id}`);
  }
  return (
    <>
      <PageHeader title="Agents">
        <button type="button" onClick={() => setCreating(true)}>
          New agent
        </button>
      </PageHeader>
      {creating ? (
        <form className="card stack" onSubmit={create} aria-label="New agent">
          <h2>New agent</h2>
          <p className="hint">It starts as a draft: you can edit and preview it before publishing.</p>
          <label>
            Agent name
            <input required maxLength={200} autoFocus value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. Support assistant" />
          </label>
          <ErrorText error={error} />
          <div className="row">
            <button type="submit" disabled={busy}>
              Create agent
            </button>
            <button type="button" className="secondary" onClick={() => setCreating(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      <ErrorText error={agents.error} />
      {agents.data && agents.data.data.length === 0 && !creating ? (
        <div className="empty">
          <p>No agents yet.</p>
          <button type="button" onClick={() => setCreating(true)}>
            Create your first agent
          </button>
        </div>
      ) : null}
      {agents.data && agents.data.data.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Knowledge</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {agents.data.data.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link to={`/agents/${agent.id}`}>{agent.name}</Link>
                </td>
                <td>
                  <Badge value={agent.status} />
                </td>
                <td>{agent.knowledge.length === 1 ? '1 entry' : `${agent.knowledge.length} entries`}</td>
                <td>{when(agent.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

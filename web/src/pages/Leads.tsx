import { useState, type FormEvent } from 'react';
import { api, dayEnd, dayStart, query, when } from '../api';
import { useApi } from '../queries';
import type { Lead, LeadList } from '../types';
import { Badge, ErrorText, PageHeader, useAction } from '../ui';
import { useAgents } from './Conversations';

const STATUSES = ['new', 'contacted', 'qualified', 'converted', 'archived'] as const satisfies readonly Lead['status'][];

function LeadEditor({ lead, onDone }: { lead: Lead; onDone: () => void }) {
  const [form, setForm] = useState({ name: lead.name ?? '', email: lead.email ?? '', phone: lead.phone ?? '', company: lead.company ?? '', status: lead.status });
  const { busy, error, run } = useAction('/leads');
  async function save(event: FormEvent) {
    event.preventDefault();
    const body = { status: form.status, name: form.name || null, email: form.email || null, phone: form.phone || null, company: form.company || null };
    if (await run(() => api('PATCH', `/leads/${lead.id}`, body))) onDone();
  }
  return (
    <form className="card stack" onSubmit={save} aria-label={`Edit lead ${lead.email ?? lead.phone ?? ''}`}>
      <div className="row">
        {(['name', 'email', 'phone', 'company'] as const).map((field) => (
          <label key={field}>
            {field[0]!.toUpperCase() + field.slice(1)}
            <input type={field === 'email' ? 'email' : 'text'} value={form[field]} onChange={(e) => setForm({ ...form, [field]: e.target.value })} />
          </label>
        ))}
        <label>
          Status
          <select value={form.status} onChange={(e) => setForm({ ...form, status: e.target.value as Lead['status'] })}>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <ErrorText error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          Save lead
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Leads: filters and search, inline editing, CSV export of what the filters select. */
export function Leads() {
  const agents = useAgents();
  const [filters, setFilters] = useState({ chatbot_id: '', status: '', search: '', from: '', to: '' });
  const [editing, setEditing] = useState<string | null>(null);
  const params = { chatbot_id: filters.chatbot_id, status: filters.status, search: filters.search, created_after: dayStart(filters.from), created_before: dayEnd(filters.to) };
  const list = useApi<LeadList>(`/leads${query({ ...params, limit: 100 })}`);
  const names = new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]));
  const set = (changes: Partial<typeof filters>) => setFilters({ ...filters, ...changes });
  return (
    <>
      <PageHeader title="Leads">
        <a className="button secondary" href={`/app/api/leads/export${query(params)}`} download>
          Export CSV
        </a>
      </PageHeader>
      <form className="filters row" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" placeholder="Name, email, company…" value={filters.search} onChange={(e) => set({ search: e.target.value })} />
        </label>
        <label>
          Agent
          <select value={filters.chatbot_id} onChange={(e) => set({ chatbot_id: e.target.value })}>
            <option value="">All agents</option>
            {(agents.data?.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={filters.status} onChange={(e) => set({ status: e.target.value })}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={filters.from} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label>
          To
          <input type="date" value={filters.to} onChange={(e) => set({ to: e.target.value })} />
        </label>
      </form>
      <ErrorText error={list.error} />
      {list.data && list.data.data.length === 0 ? <p className="empty">No leads match. Agents with lead capture collect them from visitors.</p> : null}
      {list.data && list.data.data.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Phone</th>
              <th scope="col">Company</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Created</th>
              <th scope="col"><span className="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((lead) =>
              editing === lead.id ? (
                <tr key={lead.id}>
                  <td colSpan={8}>
                    <LeadEditor
                      lead={lead}
                      onDone={() => setEditing(null)}
                    />
                  </td>
                </tr>
              ) : (
                <tr key={lead.id}>
                  <td>{lead.name ?? '—'}</td>
                  <td>{lead.email ?? '—'}</td>
                  <td>{lead.phone ?? '—'}</td>
                  <td>{lead.company ?? '—'}</td>
                  <td>
                    <Badge value={lead.status} />
                  </td>
                  <td>{lead.chatbot_id ? (names.get(lead.chatbot_id) ?? '—') : '—'}</td>
                  <td>{when(lead.created_at)}</td>
                  <td>
                    <button type="button" className="secondary small" onClick={() => setEditing(lead.id)}>
                      Edit<span className="sr-only"> {lead.email ?? lead.phone}</span>
                    </button>
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

import { useState } from 'react';
import { dayEnd, dayStart, query, when } from '../api';
import { useApi } from '../queries';
import { isAdmin, useSession } from '../session';
import { ErrorText, PageHeader, TableScroll } from '../ui';
import { AdminOnly, SettingsNav } from './Settings';

// Dashboard-only shapes (src/dashboard/routes/audit.ts): the /api/v1 document has no audit log.
interface AuditEvent {
  id: string;
  seq: number;
  occurred_at: string;
  action: string;
  actor: { type: string; id: string; name: string };
  target: { type: string; id: string };
  changes: Record<string, { before: unknown; after: unknown }>;
}

type Verification = { ok: true; events: number } | { ok: false; events: number; seq?: number; reason?: string };

function short(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** Settings → Audit log: every event with actor, action, target, time and changes; filters; export; chain status. */
export function AuditLog() {
  const { session } = useSession();
  const admin = isAdmin(session);
  const [filters, setFilters] = useState({ actor: '', action: '', from: '', to: '' });
  const [pages, setPages] = useState<number[]>([]);
  const beforeSeq = pages[pages.length - 1];
  const events = useApi<{ data: AuditEvent[]; next_before_seq: number | null }>(
    `/audit${query({ actor: filters.actor, action: filters.action, from: dayStart(filters.from), to: dayEnd(filters.to), before_seq: beforeSeq, limit: 50 })}`,
    { enabled: admin },
  );
  const verification = useApi<Verification>('/audit/verify', { enabled: admin });
  const set = (changes: Partial<typeof filters>) => {
    setPages([]);
    setFilters({ ...filters, ...changes });
  };
  const v = verification.data;
  return (
    <>
      <PageHeader title="Audit log">
        {admin ? (
          <>
            <a className="button secondary" href="/app/api/audit/export?format=csv" download>Export CSV</a>
            <a className="button secondary" href="/app/api/audit/export?format=jsonl" download>Export JSON Lines</a>
          </>
        ) : null}
      </PageHeader>
      <SettingsNav />
      {!admin ? <AdminOnly /> : null}
      {v ? (
        <p className={`chain ${v.ok ? 'ok' : 'broken'}`} role="status" data-testid="chain-status">
          {v.ok ? `✓ Chain verified: ${v.events} events, none altered, removed or reordered.` : `✗ Chain broken after ${v.events} events${v.seq ? ` at event #${v.seq}` : ''}${v.reason ? `: ${v.reason}` : ''}.`}
        </p>
      ) : null}
      {admin ? (
        <form className="filters row" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            Actor
            <input type="search" placeholder="email or key id" value={filters.actor} onChange={(e) => set({ actor: e.target.value })} />
          </label>
          <label>
            Action
            <input type="search" placeholder="e.g. api_key.created" value={filters.action} onChange={(e) => set({ action: e.target.value })} />
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
      ) : null}
      <ErrorText error={events.error} />
      {events.data ? (
        <TableScroll label="Audit events">
        <table className="audit">
          <caption className="sr-only">Audit events</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Changes</th>
            </tr>
          </thead>
          <tbody>
            {events.data.data.map((e) => (
              <tr key={e.id}>
                <td>{when(e.occurred_at)}</td>
                <td>
                  <span className="actor">{e.actor.name}</span> <span className="hint">{e.actor.type}</span>
                </td>
                <td><code>{e.action}</code></td>
                <td>
                  <span className="hint">{e.target.type}</span> <code className="id">{e.target.id}</code>
                </td>
                <td className="changes">
                  {Object.entries(e.changes).map(([field, change]) => (
                    <div key={field}>
                      <strong>{field}</strong>: {change.before === null ? '' : `${short(change.before)} → `}
                      {short(change.after)}
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </TableScroll>
      ) : null}
      <div className="row">
        {pages.length > 0 ? <button type="button" className="secondary" onClick={() => setPages(pages.slice(0, -1))}>Newer</button> : null}
        {events.data?.next_before_seq ? <button type="button" className="secondary" onClick={() => setPages([...pages, events.data!.next_before_seq!])}>Older</button> : null}
      </div>
    </>
  );
}

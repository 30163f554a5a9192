import { useState, type FormEvent } from 'react';
import { api, when } from '../api';
import { isAdmin, useSession } from '../session';
import { useApi } from '../queries';
import { CopyButton, ErrorText, PageHeader, useAction } from '../ui';
import { AdminOnly, SettingsNav } from './Settings';

// Dashboard-only (src/dashboard/routes/settings.ts): members and invitations are not in the /api/v1 document.
interface Member {
  user_id: string;
  email: string;
  role: string;
  joined_at: string;
}

interface Invitation {
  id: string;
  role: string;
  email: string | null;
  created_at: string;
  expires_at: string;
}

/** Settings → Members: invitation links with a role (and their revocation), the member list, role changes and removal. */
export function Members() {
  const { session } = useSession();
  const admin = isAdmin(session);
  const members = useApi<{ data: Member[]; invitations: Invitation[] }>('/members', { enabled: admin });
  const [role, setRole] = useState('member');
  const [email, setEmail] = useState('');
  const [link, setLink] = useState<{ url: string; expires_at: string } | null>(null);
  // Every change here (invite, role, removal, revocation) shows in the one GET /members answer.
  const action = useAction('/members');

  async function invite(event: FormEvent) {
    event.preventDefault();
    const created = await action.run(() => api<{ url: string; expires_at: string }>('POST', '/invitations', { role, email: email || null }));
    if (created) {
      setLink(created);
      setEmail('');
    }
  }
  async function change(userId: string, next: string) {
    await action.run(() => api('PATCH', `/members/${userId}`, { role: next }));
  }
  async function remove(member: Member) {
    if (!window.confirm(`Remove ${member.email} from ${session.workspace.name}?`)) return;
    await action.run(() => api('DELETE', `/members/${member.user_id}`));
  }
  async function revoke(invitation: Invitation) {
    if (!window.confirm(`Revoke the ${invitation.role} invitation${invitation.email ? ` for ${invitation.email}` : ''}? Its link stops working.`)) return;
    await action.run(() => api('DELETE', `/invitations/${invitation.id}`));
    setLink(null);
  }

  return (
    <>
      <PageHeader title="Members" />
      <SettingsNav />
      {!admin ? (
        <AdminOnly />
      ) : (
        <>
          <form className="card stack" onSubmit={invite} aria-label="Invite someone">
            <h2>Invite someone</h2>
            <div className="row">
              <label htmlFor="invite-role">
                Role
                <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value)}>
                  <option value="member">Member</option>
                  <option value="admin">Admin</option>
                  {session.workspace.role === 'owner' ? <option value="owner">Owner</option> : null}
                </select>
              </label>
              <label>
                Email (optional)
                <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
              </label>
            </div>
            <div>
              <button type="submit" disabled={action.busy}>
                Create invite link
              </button>
            </div>
            {link ? (
              <div className="row" role="status">
                <code className="secret-value" data-testid="invite-link">{link.url}</code>
                <CopyButton text={link.url} label="Copy link" />
                <span className="hint">Expires {when(link.expires_at)}</span>
              </div>
            ) : null}
            <p className="hint">
              The link works once, until it expires or you revoke it; with an email, only that address can use it. Members work with agents, conversations and leads;
              admins also manage keys and members.
            </p>
          </form>
          <ErrorText error={action.error ?? members.error} />
          <table>
            <caption className="sr-only">Members</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {(members.data?.data ?? []).map((m) => (
                <tr key={m.user_id}>
                  <td>{m.email}{m.user_id === session.user.id ? ' (you)' : ''}</td>
                  <td>
                    <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => void change(m.user_id, e.target.value)}>
                      <option value="owner">owner</option>
                      <option value="admin">admin</option>
                      <option value="member">member</option>
                    </select>
                  </td>
                  <td>{when(m.joined_at)}</td>
                  <td>
                    {m.user_id !== session.user.id ? (
                      <button type="button" className="danger small" onClick={() => void remove(m)}>
                        Remove<span className="sr-only"> {m.email}</span>
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {members.data && members.data.invitations.length > 0 ? (
            <>
              <h2>Pending invitations</h2>
              <table>
                <caption className="sr-only">Pending invitations</caption>
                <thead>
                  <tr>
                    <th scope="col">Role</th>
                    <th scope="col">For</th>
                    <th scope="col">Created</th>
                    <th scope="col">Expires</th>
                    <th scope="col"><span className="sr-only">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {members.data.invitations.map((i) => (
                    <tr key={i.id}>
                      <td>{i.role}</td>
                      <td>{i.email ?? 'anyone with the link'}</td>
                      <td>{when(i.created_at)}</td>
                      <td>{when(i.expires_at)}</td>
                      <td>
                        {i.role !== 'owner' || session.workspace.role === 'owner' ? (
                          <button type="button" className="danger small" onClick={() => void revoke(i)}>
                            Revoke<span className="sr-only"> the {i.role} invitation{i.email ? ` for ${i.email}` : ''}</span>
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : null}
        </>
      )}
    </>
  );
}

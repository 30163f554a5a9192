import { Link } from '../router';
import { isAdmin, useSession } from '../session';
import { PageHeader } from '../ui';

/** The Settings sub-navigation (Developers, Members, Audit log, Account). */
export function SettingsNav() {
  return (
    <nav aria-label="Settings" className="subnav">
      <ul>
        <li><Link to="/settings/developers">Developers</Link></li>
        <li><Link to="/settings/webhooks">Webhooks</Link></li>
        <li><Link to="/settings/provider">Model provider</Link></li>
        <li><Link to="/settings/members">Members</Link></li>
        <li><Link to="/settings/audit">Audit log</Link></li>
        <li><Link to="/settings/account">Account</Link></li>
      </ul>
    </nav>
  );
}

/** Shown instead of an admin page to members. */
export function AdminOnly() {
  return (
    <p className="notice" role="status">
      Only owners and admins of this workspace can manage this. Ask an owner to change your role.
    </p>
  );
}

/** Settings home. */
export function Settings() {
  const { session } = useSession();
  return (
    <>
      <PageHeader title="Settings" />
      <SettingsNav />
      <p>Workspace: <strong>{session.workspace.name}</strong> · your role: {session.workspace.role}</p>
      {isAdmin(session) ? (
        <ul className="plain">
          <li><strong>Developers</strong>: API keys for your integrations, and the API reference.</li>
          <li><strong>Webhooks</strong>: your systems told of new leads, conversations and more, as they happen.</li>
          <li><strong>Model provider</strong>: which model answers for every agent (the instance&apos;s owner chooses it).</li>
          <li><strong>Members</strong>: invite people, change roles.</li>
          <li><strong>Audit log</strong>: every change, who made it, and the log&apos;s integrity.</li>
          <li><strong>Account</strong>: your password.</li>
        </ul>
      ) : (
        <>
          <AdminOnly />
          <p><Link to="/settings/account">Account</Link>: change your password.</p>
        </>
      )}
    </>
  );
}

import { Link } from '../router';
import { PageHeader } from '../ui';

/** The page for a dashboard address that names nothing. */
export function NotFound() {
  return (
    <section className="not-found">
      <PageHeader title="Page not found" />
      <p className="lead">
        There is no page at <code>{window.location.pathname}</code>. It may have moved, or the link may be mistyped.
      </p>
      <ul className="plain">
        <li><Link to="/">Go to the home page</Link></li>
        <li><Link to="/agents">See your agents</Link></li>
        <li><Link to="/conversations">Open conversations</Link></li>
      </ul>
    </section>
  );
}

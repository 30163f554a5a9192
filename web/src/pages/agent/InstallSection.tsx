import type { Agent } from '../../types';
import { CopyButton } from '../../ui';

/** Install: the embed snippet, the hosted chat page, and what allowed origins are for. */
export function InstallSection({ agent, publicUrl }: { agent: Agent; publicUrl: string }) {
  const snippet = `<script src="${publicUrl}/widget.js" data-chatbot-id="${agent.id}" async></script>`;
  const hosted = `${publicUrl}/chat/${agent.id}`;
  return (
    <section className="card stack" aria-labelledby="embed-title">
      <h2 id="embed-title">Add to your website</h2>
      <p className="hint">Paste this before &lt;/body&gt; on your site{agent.status === 'active' ? '.' : ' (it answers once the agent is published).'}</p>
      <pre className="snippet" aria-label="Embed snippet">
        <code>{snippet}</code>
      </pre>
      <CopyButton text={snippet} label="Copy snippet" />
      {agent.allowed_origins.length === 0 ? (
        <p className="notice">
          Add your website&apos;s address (for example https://www.example.com) under <a href="#widget">Widget → Allowed origins</a>: the widget
          answers only on the sites listed there. The hosted chat page below works without it.
        </p>
      ) : (
        <p className="hint">The widget answers on: {agent.allowed_origins.join(', ')}.</p>
      )}
      <p className="hint">
        Or share the hosted chat page: <a href={hosted}>{hosted}</a>
      </p>
    </section>
  );
}

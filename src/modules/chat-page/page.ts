import { createHash } from 'node:crypto';
import { presentAppearance } from '../chatbots/appearance.js';
import { AGENT_LANGUAGES } from '../chatbots/schema.js';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The hosted page's policy: only our own script and API; no inline script at all. The widget styles its
 * shadow root with a constructed stylesheet, which `style-src` does not govern; the notice page's one
 * inline style is allowed by its hash. Images: our own, and the agent's avatar's origin (https only).
 */
function contentSecurityPolicy(styleHash: string | null, imageOrigin: string | null = null): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "connect-src 'self'",
    `style-src 'self'${styleHash ? ` '${styleHash}'` : ''}`,
    `img-src 'self' data:${imageOrigin ? ` ${imageOrigin}` : ''}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** A rendered HTML page and the Content-Security-Policy it is served with. */
export interface HtmlPage {
  html: string;
  csp: string;
}

// The languages an agent can set for the widget; `auto` leaves the choice to the visitor's browser.
const WIDGET_LANGUAGES = new Set<string>(AGENT_LANGUAGES.filter((language) => language !== 'auto'));

// The origin of an https avatar URL, for the page's img-src (the appearance was checked when written).
function avatarOrigin(url: string | null): string | null {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
}

/**
 * The full-page chat: the same widget script, opened full-page (`data-mode="page"`). The script URL is
 * relative so the page also works under a path prefix behind a proxy. An agent with a set language passes
 * it to the widget (`data-language`), which then speaks it from the first paint rather than once the
 * conversation has started; under `auto` the widget sets the page's `lang` from the browser's language.
 * The widget applies the agent's look itself (read at load); the page names its title and colour too.
 */
export function chatPage(chatbot: { id: string; name: string; language?: string; appearance?: string }): HtmlPage {
  const language = chatbot.language && WIDGET_LANGUAGES.has(chatbot.language) ? chatbot.language : null;
  const appearance = presentAppearance(chatbot.appearance);
  const html = `<!doctype html>
<html lang="${language ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<meta name="theme-color" content="${escape(appearance.color)}">
<title>Chat with ${escape(appearance.title ?? chatbot.name)}</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>This chat needs JavaScript.</noscript>
<script src="../widget.js" data-chatbot-id="${escape(chatbot.id)}" data-mode="page"${language ? ` data-language="${language}"` : ''}></script>
</body>
</html>
`;
  return { html, csp: contentSecurityPolicy(null, avatarOrigin(appearance.avatar_url)) };
}

const NOTICE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;color:#1c2230;background:#f6f7fb;display:grid;place-items:center;min-height:100vh;margin:0}' +
  'main{max-width:28rem;padding:2rem;background:#fff;border-radius:16px;box-shadow:0 4px 20px rgba(20,30,60,.12);text-align:center}';
const NOTICE_STYLE_HASH = `sha256-${createHash('sha256').update(NOTICE_STYLE).digest('base64')}`;

/** A friendly page for an agent that does not exist or does not take conversations now. */
export function noticePage(heading: string, text: string): HtmlPage {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(heading)}</title>
<style>${NOTICE_STYLE}</style>
</head>
<body><main><h1>${escape(heading)}</h1><p>${escape(text)}</p></main></body>
</html>
`;
  return { html, csp: contentSecurityPolicy(NOTICE_STYLE_HASH) };
}

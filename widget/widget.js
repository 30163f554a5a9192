/*
 * The chat widget. One tag puts it on any page:
 *   <script src="https://chat.example.com/widget.js" data-chatbot-id="bot_…" async></script>
 * data-mode="page" opens it full-page (the hosted /chat/{id} page). No build step, no dependencies.
 * Everything lives in a shadow root, so the host page's styles and ours never meet; server and visitor
 * text is only ever inserted with textContent.
 */
(function () {
  'use strict';

  const script = document.currentScript || document.querySelector('script[data-chatbot-id][src*="widget.js"]');
  const chatbotId = script && script.getAttribute('data-chatbot-id');
  if (!chatbotId || !/^bot_[0-9A-Za-z]{1,64}$/.test(chatbotId)) {
    console.warn('[chat widget] missing or malformed data-chatbot-id on the widget <script> tag');
    return;
  }
  const instances = (window.__chatAgentWidgets = window.__chatAgentWidgets || {});
  if (instances[chatbotId]) return; // the tag was included twice
  instances[chatbotId] = true;

  // The API lives beside widget.js (also under a path prefix behind a proxy).
  const base = new URL('.', script.src);
  const pageMode = script.getAttribute('data-mode') === 'page';
  const storageKey = 'chat-agent:' + chatbotId;
  const LEAD_FIELDS = { name: ['Name', 'text', 'name'], email: ['Email', 'email', 'email'], phone: ['Phone', 'tel', 'tel'] };
  // An answer asking for contact details (e.g. the agent declining a question) opens the lead form.
  const DETAILS_ASKED = /contact details|e-?mail address|phone number|if you leave your/i;

  const CSS = `
:host{all:initial}
*,*::before,*::after{box-sizing:border-box}
.root{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c2230;--accent:#2f5bd3;--accent-ink:#fff}
button,input,textarea{font:inherit;color:inherit}
.launcher{position:fixed;right:20px;bottom:20px;z-index:2147483000;width:56px;height:56px;border-radius:50%;border:0;
  background:var(--accent);color:var(--accent-ink);cursor:pointer;box-shadow:0 6px 20px rgba(20,30,60,.28);display:grid;place-items:center;
  transition:transform .15s ease}
.launcher:hover{transform:scale(1.06)}
.launcher svg{width:28px;height:28px;fill:currentColor}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.launcher:focus-visible,header :focus-visible{outline-color:#f5b400}
.panel{position:fixed;right:20px;bottom:88px;z-index:2147483001;width:370px;height:min(580px,calc(100vh - 110px));display:flex;flex-direction:column;
  background:#fff;border-radius:16px;box-shadow:0 12px 40px rgba(20,30,60,.3);overflow:hidden;animation:rise .18s ease-out}
.panel[hidden]{display:none}
@keyframes rise{from{opacity:0;transform:translateY(12px)}to{opacity:1;transform:none}}
header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--accent);color:var(--accent-ink)}
h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.close{border:0;background:transparent;color:inherit;font-size:24px;line-height:1;width:32px;height:32px;border-radius:8px;cursor:pointer}
.close:hover{background:rgba(255,255,255,.18)}
.scroll{flex:1;overflow-y:auto;background:#f6f7fb;display:flex;flex-direction:column;padding-bottom:8px}
.transcript{padding:14px 14px 0;display:flex;flex-direction:column;gap:8px}
.msg{max-width:85%;padding:8px 12px;border-radius:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.msg-user{align-self:flex-end;background:var(--accent);color:var(--accent-ink);border-bottom-right-radius:4px}
.msg-assistant,.msg-operator{align-self:flex-start;background:#fff;border:1px solid #e1e4ec;border-bottom-left-radius:4px}
.msg-operator{border-color:#b9d3b9}
.msg-note{align-self:center;max-width:95%;font-size:13px;color:#4a5263;text-align:center;background:transparent;padding:2px 8px}
.msg-failed{opacity:.6}
.typing{display:inline-flex;gap:4px}
.typing i{width:6px;height:6px;border-radius:50%;background:#8a93a6;animation:blink 1s infinite}
.typing i:nth-child(2){animation-delay:.15s}.typing i:nth-child(3){animation-delay:.3s}
@keyframes blink{0%,80%,100%{opacity:.25}40%{opacity:1}}
.status{padding:8px 14px;font-size:13px;background:#fff4e0;color:#6b4500;display:flex;gap:8px;align-items:center}
.status[hidden],.lead[hidden],.offer[hidden]{display:none}
.status button,.offer,.lead button{border:1px solid #c8cdd9;background:#fff;border-radius:8px;padding:4px 10px;cursor:pointer}
.offer{margin:6px 14px 0;align-self:flex-start;font-size:13px}
.lead{margin:8px 14px 0;padding:10px;border:1px solid #e1e4ec;border-radius:12px;display:grid;gap:6px;background:#fff}
.lead p{margin:0;font-size:13px}
.lead label{display:grid;gap:2px;font-size:13px;font-weight:600}
.lead input{border:1px solid #c8cdd9;border-radius:8px;padding:6px 8px;font-weight:400}
.lead .row{display:flex;gap:8px;justify-content:flex-end}
.lead button[type=submit]{background:var(--accent);color:var(--accent-ink);border-color:var(--accent)}
.lead .error{color:#a3261b;font-size:13px;margin:0}
.composer{display:flex;gap:8px;padding:10px 14px 14px;border-top:1px solid #eceef3}
.composer textarea{flex:1;resize:none;min-height:40px;max-height:120px;border:1px solid #c8cdd9;border-radius:10px;padding:8px 10px}
.composer button{border:0;border-radius:10px;padding:0 16px;background:var(--accent);color:var(--accent-ink);cursor:pointer;font-weight:600}
.composer button:disabled{opacity:.55;cursor:default}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.page{position:fixed;inset:0;background:#e9ecf3}
.page .panel{inset:0;width:auto;height:auto;max-width:760px;margin:0 auto;border-radius:0;box-shadow:0 0 30px rgba(20,30,60,.12);animation:none}
@media (max-width:480px){.panel{inset:0;width:auto;height:auto;border-radius:0}.open .launcher{display:none}}
@media (prefers-reduced-motion:reduce){*,*::before,*::after{animation:none!important;transition:none!important}}
`;

  // ---- storage: the conversation survives page reloads (per chatbot, in the host page's origin) ----
  function loadSaved() {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey) || 'null');
      return saved && typeof saved.conversation_id === 'string' && typeof saved.visitor_token === 'string' ? saved : null;
    } catch {
      return null; // storage blocked or corrupt: a fresh conversation it is
    }
  }
  function save(value) {
    try {
      if (value) localStorage.setItem(storageKey, JSON.stringify(value));
      else localStorage.removeItem(storageKey);
    } catch {
      /* storage blocked: the conversation lasts for this page view */
    }
  }

  // ---- DOM helpers: nodes and textContent only, never markup built from strings ----
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach((name) => {
      if (name === 'text') node.textContent = attrs.text;
      else if (name === 'class') node.className = attrs.class;
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach((child) => node.appendChild(child));
    return node;
  }
  const ICON_CHAT = 'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z';
  const ICON_CLOSE = 'M5.4 8.6 12 15.2l6.6-6.6L20 10l-8 8-8-8z';
  const iconPath = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  iconPath.setAttribute('d', ICON_CHAT);
  function launcherIcon() {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    svg.appendChild(iconPath);
    return svg;
  }

  // ---- build the UI ----
  const host = document.createElement('chat-agent-widget');
  host.setAttribute('data-chatbot-id', chatbotId);
  const shadow = host.attachShadow({ mode: 'open' });
  if (shadow.adoptedStyleSheets !== undefined && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    // A constructed sheet also works under a host page CSP without 'unsafe-inline' styles.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    shadow.adoptedStyleSheets = [sheet];
  } else {
    shadow.appendChild(el('style', { text: CSS }));
  }

  const title = el('h2', { id: 'chat-title', text: 'Chat' });
  const closeButton = el('button', { type: 'button', class: 'close', 'aria-label': 'Close chat', text: '×' });
  const transcript = el('div', { class: 'transcript', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
  const statusText = el('span');
  const status = el('div', { class: 'status', role: 'alert', hidden: '' }, [statusText]);
  const offerButton = el('button', { type: 'button', class: 'offer', hidden: '', text: 'Leave your contact details' });
  const leadForm = el('form', { class: 'lead', hidden: '', 'aria-label': 'Contact details', novalidate: '' });
  const input = el('textarea', { id: 'chat-input', rows: '1', maxlength: '10000', placeholder: 'Type your message…', autocomplete: 'off' });
  const sendButton = el('button', { type: 'submit', text: 'Send' });
  const composer = el('form', { class: 'composer' }, [el('label', { for: 'chat-input', class: 'sr-only', text: 'Message' }), input, sendButton]);
  const panel = el('section', { class: 'panel', id: 'chat-panel', role: 'dialog', 'aria-labelledby': 'chat-title', hidden: '' }, [
    el('header', {}, pageMode ? [title] : [title, closeButton]),
    el('div', { class: 'scroll' }, [transcript, offerButton, leadForm]),
    status,
    composer,
  ]);
  const launcher = el('button', { type: 'button', class: 'launcher', 'aria-label': 'Open chat', 'aria-expanded': 'false', 'aria-controls': 'chat-panel' }, [launcherIcon()]);
  const root = el('div', { class: pageMode ? 'root page' : 'root' }, pageMode ? [panel] : [launcher, panel]);
  shadow.appendChild(root);

  const state = { session: null, ready: null, busy: false, watch: 0 };

  function scrollToEnd() {
    const scroller = transcript.parentNode;
    scroller.scrollTop = scroller.scrollHeight;
  }
  function addMessage(role, text, id) {
    const node = el('div', { class: 'msg msg-' + role, text: text });
    if (id) node.setAttribute('data-message-id', id);
    transcript.appendChild(node);
    scrollToEnd();
    return node;
  }
  function showStatus(text, action) {
    statusText.textContent = text;
    while (status.childNodes.length > 1) status.removeChild(status.lastChild);
    if (action) {
      const button = el('button', { type: 'button', text: action.label });
      button.addEventListener('click', action.run);
      status.appendChild(button);
    }
    status.hidden = false;
  }
  function clearStatus() {
    status.hidden = true;
  }
  function setBusy(busy) {
    state.busy = busy;
    sendButton.disabled = busy;
    transcript.setAttribute('aria-busy', busy ? 'true' : 'false');
  }

  // ---- HTTP ----
  function api(path) {
    return new URL(path, base).toString();
  }
  function headers(extra) {
    const result = { 'content-type': 'application/json' };
    if (state.session) result.authorization = 'Bearer ' + state.session.visitor_token;
    return Object.assign(result, extra || {});
  }
  async function problemOf(response) {
    try {
      return await response.json();
    } catch {
      return {};
    }
  }
  function politeError(response, problem) {
    if (response.status === 429) {
      const wait = Number(response.headers.get('retry-after'));
      return "You're sending messages too fast. Please wait " + (wait > 0 ? Math.ceil(wait) + ' seconds' : 'a moment') + ' and try again.';
    }
    if (response.status === 409 && problem.code === 'conversation_closed') return 'This conversation has ended.';
    if (response.status === 409 && problem.code === 'chatbot_not_active') return 'This chat is not taking messages right now. Please try again later.';
    if (response.status === 403) return 'This chat is not available on this site.'; // origin not in allowed_origins
    if (response.status === 400) return (problem.errors && problem.errors[0] && problem.errors[0].message) || problem.detail || 'Please check what you entered.';
    return 'Sorry, something went wrong. Please try again.';
  }

  // ---- the conversation: restore the saved one, or start a new one ----
  function renderHeader(session) {
    title.textContent = session.chatbot && session.chatbot.name ? session.chatbot.name : 'Chat';
    const lead = session.chatbot && session.chatbot.lead_capture;
    offerButton.hidden = !(lead && lead.enabled) || Boolean(session.lead_sent);
  }
  async function startConversation() {
    const response = await fetch(api('widget/v1/chatbots/' + encodeURIComponent(chatbotId) + '/conversations'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    if (!response.ok) {
      const problem = await problemOf(response);
      const reason = response.status === 404 ? 'This chat is not available.' : response.status === 409 ? 'This chat is not taking conversations right now.' : politeError(response, problem);
      throw Object.assign(new Error(reason), { final: [403, 404, 409].includes(response.status) });
    }
    const created = await response.json();
    const session = {
      conversation_id: created.conversation_id,
      visitor_token: created.visitor_token,
      welcome_message: created.welcome_message || null,
      chatbot: created.chatbot || null,
      lead_sent: false,
    };
    save(session);
    return session;
  }
  async function loadTranscript(session) {
    const messages = [];
    let cursor = null;
    for (let page = 0; page < 10; page++) {
      const query = 'limit=100' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
      const response = await fetch(api('widget/v1/conversations/' + encodeURIComponent(session.conversation_id) + '/messages?' + query), {
        headers: { authorization: 'Bearer ' + session.visitor_token },
      });
      if (!response.ok) return { status: response.status };
      const body = await response.json();
      messages.push.apply(messages, body.data || []);
      if (!body.has_more || !body.next_cursor) break;
      cursor = body.next_cursor;
    }
    return { status: 200, messages: messages };
  }
  function renderTranscript(session, messages) {
    while (transcript.firstChild) transcript.removeChild(transcript.firstChild);
    const first = messages[0];
    if (session.welcome_message && !(first && first.role !== 'user' && first.content === session.welcome_message)) {
      addMessage('assistant', session.welcome_message);
    }
    messages.forEach((message) => addMessage(message.role, message.content, message.id));
  }
  async function connect() {
    let session = loadSaved();
    if (session) {
      const loaded = await loadTranscript(session);
      if (loaded.status === 200) {
        state.session = session;
        renderHeader(session);
        renderTranscript(session, loaded.messages);
        return;
      }
      if (![401, 403, 404, 409, 410].includes(loaded.status)) throw new Error('Sorry, the chat could not be loaded.');
      save(null); // the old conversation is gone or closed: start afresh
    }
    session = await startConversation();
    state.session = session;
    renderHeader(session);
    renderTranscript(session, []);
  }
  function ensureConnected() {
    if (!state.ready) {
      state.ready = connect().catch((error) => {
        state.ready = null;
        const message = error instanceof TypeError ? "We couldn't reach the chat. Check your connection." : error.message;
        showStatus(message, error.final ? null : { label: 'Retry', run: () => ensureConnected().then(clearStatus, () => undefined) });
        throw error;
      });
    }
    return state.ready;
  }
  function startOver() {
    save(null);
    state.session = null;
    state.ready = null;
    clearStatus();
    leadForm.hidden = true;
    ensureConnected().then(() => input.focus(), () => undefined);
  }

  // ---- sending, with the answer streamed as server-sent events over fetch ----
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = 'message';
        const data = [];
        block.split('\n').forEach((line) => {
          if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        });
        if (data.length) onEvent(type, data.join('\n'));
      }
    }
  }
  function parse(data) {
    try {
      return JSON.parse(data);
    } catch {
      return null;
    }
  }
  function typingBubble() {
    const node = el('div', { class: 'msg msg-assistant', 'data-streaming': 'true' }, [
      el('span', { class: 'typing', 'aria-hidden': 'true' }, [el('i'), el('i'), el('i')]),
    ]);
    transcript.appendChild(node);
    scrollToEnd();
    return node;
  }
  function finishReply(bubble, reply) {
    bubble.removeAttribute('data-streaming');
    bubble.textContent = reply.content;
    bubble.setAttribute('data-message-id', reply.id);
    scrollToEnd();
    const lead = state.session.chatbot && state.session.chatbot.lead_capture;
    const asks = lead && ((lead.prompt && reply.content.includes(lead.prompt)) || DETAILS_ASKED.test(reply.content));
    if (asks && lead.enabled && !state.session.lead_sent) openLeadForm(false);
  }

  async function send(text) {
    if (state.busy) return;
    clearStatus();
    clearInterval(state.watch);
    setBusy(true);
    let mine = null;
    let bubble = null;
    try {
      // Connected first: connecting renders the conversation afresh, which would drop a bubble added before.
      await ensureConnected();
      mine = addMessage('user', text);
      bubble = typingBubble();
      const response = await fetch(api('widget/v1/conversations/' + encodeURIComponent(state.session.conversation_id) + '/messages'), {
        method: 'POST',
        headers: headers({ accept: 'text/event-stream' }),
        body: JSON.stringify({ content: text }),
      });
      if (!response.ok) {
        const problem = await problemOf(response);
        bubble.remove();
        // A paused agent may be resumed: the text stays in the box (politeError says why), the conversation is kept.
        const ended = (response.status === 409 && problem.code !== 'chatbot_not_active') || response.status === 401 || response.status === 404;
        if (ended) {
          mine.classList.add('msg-failed');
          showStatus(response.status === 409 ? 'This conversation has ended.' : 'This conversation is no longer available.', { label: 'Start a new conversation', run: startOver });
        } else {
          // Not sent: the text goes back into the box, to send again.
          mine.remove();
          showStatus(politeError(response, problem));
          if (!input.value) input.value = text;
        }
        return;
      }
      if (!/text\/event-stream/.test(response.headers.get('content-type') || '')) {
        const body = await response.json();
        if (body.message) mine.setAttribute('data-message-id', body.message.id);
        if (body.reply) finishReply(bubble, body.reply);
        else bubble.remove();
        return;
      }
      let replied = false;
      let failed = false;
      await readEvents(response, (type, data) => {
        const payload = parse(data);
        if (type === 'message' && payload) mine.setAttribute('data-message-id', payload.id);
        else if (type === 'delta' && payload && typeof payload.text === 'string') {
          const typing = bubble.querySelector('.typing');
          if (typing) typing.remove();
          // One text node per piece: the answer grows as it is generated.
          bubble.appendChild(document.createTextNode(payload.text));
          scrollToEnd();
        } else if (type === 'reset') {
          // The text so far is withdrawn (the provider failed mid-answer); the fallback answer follows.
          while (bubble.lastChild) bubble.removeChild(bubble.lastChild);
        } else if (type === 'reply') {
          replied = true;
          if (payload) finishReply(bubble, payload);
          else bubble.remove(); // a person answers this conversation; their message comes later
        } else if (type === 'error') failed = true;
      });
      if (!replied) {
        bubble.remove();
        // The question is stored and its answer is owed (a delayed answer, or a person answering): look for it.
        if (failed) addMessage('note', 'Your message was received. The answer is taking longer than usual; it will appear here.');
        watchForAnswer();
      }
    } catch (error) {
      if (bubble) bubble.remove();
      if (mine) mine.remove();
      if (error instanceof TypeError) {
        showStatus("We couldn't reach the chat. Check your connection.", { label: 'Retry', run: () => send(text) });
      } else if (!state.session) {
        if (!input.value) input.value = text; // connect() already said why
      } else {
        showStatus('Sorry, something went wrong. Please try again.');
      }
    } finally {
      setBusy(false);
    }
  }
  function watchForAnswer() {
    clearInterval(state.watch);
    const known = transcript.querySelectorAll('[data-message-id]').length;
    let checks = 0;
    state.watch = setInterval(async () => {
      if (++checks > 45) clearInterval(state.watch);
      if (panel.hidden || state.busy) return;
      const loaded = await loadTranscript(state.session).catch(() => null);
      if (loaded && loaded.status === 200 && loaded.messages.length > known && !state.busy) {
        clearInterval(state.watch);
        renderTranscript(state.session, loaded.messages);
      }
    }, 4000);
  }

  // ---- the lead form ----
  function openLeadForm(focus) {
    const chatbot = state.session && state.session.chatbot;
    const capture = chatbot && chatbot.lead_capture;
    if (!capture || !capture.enabled || state.session.lead_sent) return;
    if (!leadForm.hidden) return;
    while (leadForm.firstChild) leadForm.removeChild(leadForm.firstChild);
    let fields = (capture.fields || []).filter((name) => LEAD_FIELDS[name]);
    if (!fields.length) fields = ['name', 'email'];
    leadForm.appendChild(el('p', { text: capture.prompt || "Leave your details and we'll get back to you." }));
    fields.forEach((name) => {
      const spec = LEAD_FIELDS[name];
      leadForm.appendChild(el('label', {}, [document.createTextNode(spec[0]), el('input', { name: name, type: spec[1], autocomplete: spec[2], maxlength: '200' })]));
    });
    leadForm.appendChild(el('p', { class: 'error', role: 'alert' }));
    const later = el('button', { type: 'button', text: 'Not now' });
    later.addEventListener('click', () => {
      leadForm.hidden = true;
      offerButton.focus();
    });
    leadForm.appendChild(el('div', { class: 'row' }, [later, el('button', { type: 'submit', text: 'Send details' })]));
    leadForm.hidden = false;
    offerButton.hidden = true;
    scrollToEnd();
    if (focus) leadForm.querySelector('input').focus();
  }
  async function submitLead(event) {
    event.preventDefault();
    const error = leadForm.querySelector('.error');
    const body = {};
    Array.prototype.forEach.call(leadForm.querySelectorAll('input'), (field) => {
      if (field.value.trim()) body[field.name] = field.value.trim();
    });
    if (!body.email && !body.phone) {
      error.textContent = 'Please enter an email address or a phone number.';
      return;
    }
    const submit = leadForm.querySelector('button[type=submit]');
    submit.disabled = true;
    try {
      const response = await fetch(api('widget/v1/conversations/' + encodeURIComponent(state.session.conversation_id) + '/lead'), {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        error.textContent = politeError(response, await problemOf(response));
        return;
      }
      state.session.lead_sent = true;
      save(state.session);
      leadForm.hidden = true;
      addMessage('note', "Thank you! We've got your details and will be in touch.");
      input.focus();
    } catch {
      error.textContent = "We couldn't reach the chat. Please try again.";
    } finally {
      submit.disabled = false;
    }
  }

  // ---- open, close, keys ----
  function open() {
    panel.hidden = false;
    root.classList.add('open');
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', 'Close chat');
    iconPath.setAttribute('d', ICON_CLOSE);
    input.focus();
    ensureConnected().then(() => input.focus(), () => undefined);
  }
  function close() {
    panel.hidden = true;
    root.classList.remove('open');
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', 'Open chat');
    iconPath.setAttribute('d', ICON_CHAT);
    launcher.focus();
  }

  launcher.addEventListener('click', () => (panel.hidden ? open() : close()));
  closeButton.addEventListener('click', close);
  panel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !pageMode) {
      event.stopPropagation();
      close();
    }
  });
  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || state.busy) return;
    input.value = '';
    send(text);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (composer.requestSubmit) composer.requestSubmit();
      else composer.dispatchEvent(new Event('submit', { cancelable: true }));
    }
  });
  offerButton.addEventListener('click', () => openLeadForm(true));
  leadForm.addEventListener('submit', submitLead);

  function mount() {
    document.body.appendChild(host);
    if (pageMode) open();
  }
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);
})();

/*
 * The chat widget. One tag puts it on any page:
 *   <script src="https://chat.example.com/widget.js" data-chatbot-id="bot_…" async></script>
 * data-mode="page" opens it full-page (the hosted /chat/{id} page). No build step, no dependencies.
 * Everything lives in a shadow root, so the host page's styles and ours never meet; server and visitor
 * text is only ever inserted as DOM nodes (textContent, or the small Markdown renderer below, which builds
 * elements from a fixed list and never parses HTML).
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
  // Lead form fields: [label key, input type, autocomplete].
  const LEAD_FIELDS = { name: ['name', 'text', 'name'], email: ['email', 'email', 'email'], phone: ['phone', 'tel', 'tel'], company: ['company', 'text', 'organization'] };
  // The kinds of answer (its `outcome`) after which the lead form opens, when lead capture is on: the agent could
  // not answer (declined, or only pointed at pages that may help), a person was asked for, or the answer failed.
  // Never read from the answer's words: an answer quoting "phone number" from the knowledge is an answer.
  const OFFERS_CONTACT = ['best_matches', 'unanswered', 'handoff', 'failed'];

  // The widget's own words. `{}` is filled in by t(key, value). A missing key falls back to English.
  const STRINGS = {
    en: {
      openChat: 'Open chat', closeChat: 'Close chat', conversation: 'Conversation', message: 'Message',
      placeholder: 'Type your message…', send: 'Send', offer: 'Leave your contact details', details: 'Contact details',
      leadPrompt: "Leave your details and we'll get back to you.", name: 'Name', email: 'Email', phone: 'Phone', company: 'Company',
      later: 'Not now', sendDetails: 'Send details', needContact: 'Please enter an email address or a phone number.',
      leadThanks: "Thank you! We've got your details and will be in touch.", retry: 'Retry',
      offline: "We couldn't reach the chat. Check your connection.", offlineForm: "We couldn't reach the chat. Please try again.",
      tooFast: "You're sending messages too fast. Please wait {} and try again.", seconds: '{} seconds', moment: 'a moment',
      ended: 'This conversation has ended.', gone: 'This conversation is no longer available.',
      paused: 'This chat is not taking messages right now. Please try again later.', notHere: 'Chat is not enabled on this website.',
      check: 'Please check what you entered.', failed: 'Sorry, something went wrong. Please try again.',
      missing: 'This chat is not available.', closed: 'This chat is not taking conversations right now.',
      loadFailed: 'Sorry, the chat could not be loaded.', restart: 'Start a new conversation',
      late: 'Your message was received. The answer is taking longer than usual; it will appear here.',
      suggestions: 'Suggested questions', sources: 'Sources:', up: 'Helpful', down: 'Not helpful',
      comment: 'What was missing? (optional)', feedbackThanks: 'Thanks for your feedback!',
      handoff: 'Talk to a person', handoffSent: "We've asked a person to join. Their answer will appear here.",
    },
    es: {
      openChat: 'Abrir chat', closeChat: 'Cerrar chat', conversation: 'Conversación', message: 'Mensaje',
      placeholder: 'Escribe tu mensaje…', send: 'Enviar', offer: 'Deja tus datos de contacto', details: 'Datos de contacto',
      leadPrompt: 'Déjanos tus datos y te responderemos.', name: 'Nombre', email: 'Correo electrónico', phone: 'Teléfono', company: 'Empresa',
      later: 'Ahora no', sendDetails: 'Enviar datos', needContact: 'Introduce un correo electrónico o un número de teléfono.',
      leadThanks: '¡Gracias! Tenemos tus datos y nos pondremos en contacto contigo.', retry: 'Reintentar',
      offline: 'No pudimos conectar con el chat. Comprueba tu conexión.', offlineForm: 'No pudimos conectar con el chat. Inténtalo de nuevo.',
      tooFast: 'Estás enviando mensajes demasiado rápido. Espera {} y vuelve a intentarlo.', seconds: '{} segundos', moment: 'un momento',
      ended: 'Esta conversación ha terminado.', gone: 'Esta conversación ya no está disponible.',
      paused: 'Este chat no acepta mensajes en este momento. Inténtalo más tarde.', notHere: 'El chat no está habilitado en este sitio web.',
      check: 'Revisa lo que has escrito.', failed: 'Lo sentimos, algo salió mal. Inténtalo de nuevo.',
      missing: 'Este chat no está disponible.', closed: 'Este chat no acepta conversaciones en este momento.',
      loadFailed: 'Lo sentimos, no se pudo cargar el chat.', restart: 'Empezar una nueva conversación',
      late: 'Hemos recibido tu mensaje. La respuesta está tardando más de lo habitual; aparecerá aquí.',
      suggestions: 'Preguntas sugeridas', sources: 'Fuentes:', up: 'Útil', down: 'No útil',
      comment: '¿Qué faltó? (opcional)', feedbackThanks: '¡Gracias por tu opinión!',
      handoff: 'Hablar con una persona', handoffSent: 'Hemos pedido a una persona que se una. Su respuesta aparecerá aquí.',
    },
    fr: {
      openChat: 'Ouvrir le chat', closeChat: 'Fermer le chat', conversation: 'Conversation', message: 'Message',
      placeholder: 'Écrivez votre message…', send: 'Envoyer', offer: 'Laissez vos coordonnées', details: 'Coordonnées',
      leadPrompt: 'Laissez vos coordonnées et nous vous recontacterons.', name: 'Nom', email: 'E-mail', phone: 'Téléphone', company: 'Entreprise',
      later: 'Pas maintenant', sendDetails: 'Envoyer mes coordonnées', needContact: 'Indiquez une adresse e-mail ou un numéro de téléphone.',
      leadThanks: 'Merci ! Nous avons bien reçu vos coordonnées et vous recontacterons.', retry: 'Réessayer',
      offline: 'Impossible de joindre le chat. Vérifiez votre connexion.', offlineForm: 'Impossible de joindre le chat. Veuillez réessayer.',
      tooFast: 'Vous envoyez des messages trop vite. Patientez {} puis réessayez.', seconds: '{} secondes', moment: 'un instant',
      ended: 'Cette conversation est terminée.', gone: "Cette conversation n'est plus disponible.",
      paused: "Ce chat n'accepte pas de messages pour le moment. Réessayez plus tard.", notHere: "Le chat n'est pas activé sur ce site web.",
      check: 'Vérifiez ce que vous avez saisi.', failed: "Désolé, une erreur s'est produite. Veuillez réessayer.",
      missing: "Ce chat n'est pas disponible.", closed: "Ce chat n'accepte pas de conversations pour le moment.",
      loadFailed: "Désolé, le chat n'a pas pu être chargé.", restart: 'Commencer une nouvelle conversation',
      late: 'Votre message a bien été reçu. La réponse prend plus de temps que prévu ; elle apparaîtra ici.',
      suggestions: 'Questions suggérées', sources: 'Sources :', up: 'Utile', down: 'Pas utile',
      comment: "Qu'est-ce qui manquait ? (facultatif)", feedbackThanks: 'Merci pour votre avis !',
      handoff: 'Parler à une personne', handoffSent: 'Nous avons demandé à une personne de vous répondre. Sa réponse apparaîtra ici.',
    },
    de: {
      openChat: 'Chat öffnen', closeChat: 'Chat schließen', conversation: 'Unterhaltung', message: 'Nachricht',
      placeholder: 'Nachricht eingeben…', send: 'Senden', offer: 'Kontaktdaten hinterlassen', details: 'Kontaktdaten',
      leadPrompt: 'Hinterlassen Sie Ihre Daten, wir melden uns bei Ihnen.', name: 'Name', email: 'E-Mail', phone: 'Telefon', company: 'Firma',
      later: 'Jetzt nicht', sendDetails: 'Daten senden', needContact: 'Bitte geben Sie eine E-Mail-Adresse oder eine Telefonnummer ein.',
      leadThanks: 'Danke! Wir haben Ihre Daten erhalten und melden uns.', retry: 'Erneut versuchen',
      offline: 'Der Chat ist nicht erreichbar. Prüfen Sie Ihre Verbindung.', offlineForm: 'Der Chat ist nicht erreichbar. Bitte versuchen Sie es erneut.',
      tooFast: 'Sie senden Nachrichten zu schnell. Bitte warten Sie {} und versuchen Sie es dann erneut.', seconds: '{} Sekunden', moment: 'einen Moment',
      ended: 'Diese Unterhaltung ist beendet.', gone: 'Diese Unterhaltung ist nicht mehr verfügbar.',
      paused: 'Dieser Chat nimmt gerade keine Nachrichten an. Bitte versuchen Sie es später.', notHere: 'Der Chat ist auf dieser Website nicht aktiviert.',
      check: 'Bitte prüfen Sie Ihre Eingabe.', failed: 'Leider ist etwas schiefgegangen. Bitte versuchen Sie es erneut.',
      missing: 'Dieser Chat ist nicht verfügbar.', closed: 'Dieser Chat nimmt gerade keine Unterhaltungen an.',
      loadFailed: 'Der Chat konnte leider nicht geladen werden.', restart: 'Neue Unterhaltung beginnen',
      late: 'Ihre Nachricht ist angekommen. Die Antwort dauert länger als üblich; sie erscheint hier.',
      suggestions: 'Vorgeschlagene Fragen', sources: 'Quellen:', up: 'Hilfreich', down: 'Nicht hilfreich',
      comment: 'Was hat gefehlt? (optional)', feedbackThanks: 'Danke für Ihr Feedback!',
      handoff: 'Mit einer Person sprechen', handoffSent: 'Wir haben eine Person gebeten, sich zu melden. Die Antwort erscheint hier.',
    },
    pt: {
      openChat: 'Abrir chat', closeChat: 'Fechar chat', conversation: 'Conversa', message: 'Mensagem',
      placeholder: 'Digite sua mensagem…', send: 'Enviar', offer: 'Deixe seus dados de contato', details: 'Dados de contato',
      leadPrompt: 'Deixe seus dados e entraremos em contato.', name: 'Nome', email: 'E-mail', phone: 'Telefone', company: 'Empresa',
      later: 'Agora não', sendDetails: 'Enviar dados', needContact: 'Informe um e-mail ou um número de telefone.',
      leadThanks: 'Obrigado! Recebemos seus dados e entraremos em contato.', retry: 'Tentar novamente',
      offline: 'Não foi possível conectar ao chat. Verifique sua conexão.', offlineForm: 'Não foi possível conectar ao chat. Tente novamente.',
      tooFast: 'Você está enviando mensagens rápido demais. Aguarde {} e tente novamente.', seconds: '{} segundos', moment: 'um momento',
      ended: 'Esta conversa foi encerrada.', gone: 'Esta conversa não está mais disponível.',
      paused: 'Este chat não está recebendo mensagens no momento. Tente mais tarde.', notHere: 'O chat não está ativado neste site.',
      check: 'Verifique o que você digitou.', failed: 'Desculpe, algo deu errado. Tente novamente.',
      missing: 'Este chat não está disponível.', closed: 'Este chat não está recebendo conversas no momento.',
      loadFailed: 'Desculpe, não foi possível carregar o chat.', restart: 'Começar uma nova conversa',
      late: 'Sua mensagem foi recebida. A resposta está demorando mais que o normal; ela aparecerá aqui.',
      suggestions: 'Perguntas sugeridas', sources: 'Fontes:', up: 'Útil', down: 'Não útil',
      comment: 'O que faltou? (opcional)', feedbackThanks: 'Obrigado pela sua avaliação!',
      handoff: 'Falar com uma pessoa', handoffSent: 'Pedimos a uma pessoa que participe. A resposta aparecerá aqui.',
    },
  };
  // The agent's language ('auto', or one of STRINGS), else the first of the browser's languages we have.
  function pickLanguage(wanted) {
    const nav = window.navigator || {};
    const tags = wanted && wanted !== 'auto' ? [wanted] : [].concat(nav.languages || [], nav.language || []);
    for (let i = 0; i < tags.length; i++) {
      const code = String(tags[i]).slice(0, 2).toLowerCase();
      if (STRINGS[code]) return code;
    }
    return 'en';
  }
  let lang = pickLanguage('auto');
  // The visitor's browser language tag: sent when a conversation starts (the agent declines and hands off in it).
  function browserLocale() {
    const nav = window.navigator || {};
    const tag = String((nav.languages && nav.languages[0]) || nav.language || '');
    return /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(tag) && tag.length <= 35 ? tag : null;
  }
  /** The agent's welcome message and suggested questions in the visitor's language, when it has them. */
  function ownWords(bot) {
    const code = (browserLocale() || '').slice(0, 2).toLowerCase();
    return (bot.translations && bot.translations[code]) || {};
  }
  function t(key, value) {
    const text = STRINGS[lang][key] || STRINGS.en[key];
    return value === undefined ? text : text.replace('{}', value);
  }

  const CSS = `
:host{all:initial}
*,*::before,*::after{box-sizing:border-box}
.root{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c2230;--accent:#2f5bd3;--accent-ink:#fff;--accent-text:#2f5bd3}
button,input,textarea{font:inherit;color:inherit}
.launcher{position:fixed;right:20px;bottom:20px;z-index:2147483000;width:56px;height:56px;border-radius:50%;border:0;
  background:var(--accent);color:var(--accent-ink);cursor:pointer;box-shadow:0 6px 20px rgba(20,30,60,.28);display:grid;place-items:center;
  transition:transform .15s ease}
.launcher:hover{transform:scale(1.06)}
.launcher svg{width:28px;height:28px;fill:currentColor}
.launcher.labelled{width:auto;height:48px;border-radius:999px;padding:0 18px 0 14px;display:flex;gap:8px;font-weight:600}
.launcher.labelled svg{width:22px;height:22px}
.open .launcher.labelled{width:56px;height:56px;padding:0;display:grid}
.open .launcher.labelled span,.loading .launcher{visibility:hidden}
.open .launcher.labelled span{position:absolute}
.left .launcher,.left .panel{right:auto;left:20px}
.avatar{width:28px;height:28px;border-radius:50%;object-fit:cover;flex:none;background:#fff}
.with-avatar .msg-assistant{position:relative;margin-left:34px}
.with-avatar .msg-assistant::before{content:"";position:absolute;left:-34px;bottom:0;width:26px;height:26px;border-radius:50%;background:#e1e4ec var(--avatar) center/cover}
.with-avatar .meta{margin-left:38px}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.launcher:focus-visible,header :focus-visible{outline-color:#f5b400}
.panel{position:fixed;right:20px;bottom:88px;z-index:2147483001;width:370px;height:min(580px,calc(100vh - 110px));display:flex;flex-direction:column;
  background:#fff;border-radius:16px;box-shadow:0 12px 40px rgba(20,30,60,.3);overflow:hidden;animation:rise .18s ease-out}
.panel[hidden]{display:none}
@keyframes rise{from{opacity:0;transform:translateY(12px)}to{opacity:1;transform:none}}
header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--accent);color:var(--accent-ink)}
h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.close{border:0;background:transparent;color:inherit;font-size:24px;line-height:1;width:32px;height:32px;border-radius:8px;cursor:pointer}
.close:hover,.handoff:hover:not(:disabled){background:color-mix(in srgb,currentColor 18%,transparent)}
.handoff{flex:none;max-width:55%;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;border:1px solid color-mix(in srgb,currentColor 55%,transparent);background:transparent;
  color:inherit;border-radius:999px;padding:2px 8px;font-size:12px;cursor:pointer}
.handoff:disabled{opacity:.6;cursor:default}
.scroll{flex:1;overflow-y:auto;background:#f6f7fb;display:flex;flex-direction:column;padding-bottom:8px}
.transcript{padding:14px 14px 0;display:flex;flex-direction:column;gap:8px}
.msg{max-width:85%;padding:8px 12px;border-radius:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.msg-user{align-self:flex-end;background:var(--accent);color:var(--accent-ink);border-bottom-right-radius:4px}
.msg-assistant,.msg-operator{align-self:flex-start;background:#fff;border:1px solid #e1e4ec;border-bottom-left-radius:4px}
.msg-operator{border-color:#b9d3b9}
.msg-note{align-self:center;max-width:95%;font-size:13px;color:#4a5263;text-align:center;background:transparent;padding:2px 8px}
.msg-failed{opacity:.6}
.msg-assistant{white-space:normal}
.msg-assistant[data-streaming]{white-space:pre-wrap}
.msg-assistant p,.msg-assistant li{white-space:pre-line;margin:0}
.msg-assistant p,.msg-assistant ul,.msg-assistant ol,.msg-assistant pre{margin:0 0 6px}
.msg-assistant>:last-child,.msg-assistant li>:last-child{margin-bottom:0}
.msg-assistant ul,.msg-assistant ol{padding-left:20px}
.msg-assistant code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef0f5;border-radius:4px;padding:1px 4px}
.msg-assistant pre{white-space:pre-wrap;background:#eef0f5;border-radius:8px;padding:6px 8px}
.msg-assistant pre code{padding:0;background:none}
.msg-assistant table{border-collapse:collapse;margin:0 0 6px;font-size:13px}
.msg-assistant th,.msg-assistant td{border:1px solid #d5d9e2;padding:2px 6px;text-align:left}
.msg-assistant a,.meta a{color:var(--accent-text);text-decoration:underline}
.meta{align-self:flex-start;max-width:85%;margin:-4px 0 2px 4px;display:grid;gap:4px;font-size:12.5px;color:#4a5263}
.sources ul{display:inline;margin:0;padding:0;list-style:none}
.sources li{display:inline}
.sources li+li::before{content:" · "}
.sources span{font-weight:600;margin-right:4px}
.rate{display:flex;align-items:center;gap:2px;flex-wrap:wrap}
.thumb{border:1px solid transparent;background:transparent;color:#6b7386;border-radius:8px;width:28px;height:26px;padding:0;display:grid;place-items:center;cursor:pointer}
.thumb:hover{background:#e9ecf3}
.thumb[aria-pressed=true]{color:var(--accent-text);background:#e3e9fb;border-color:#c4d1f5}
.thumb svg{width:16px;height:16px;fill:currentColor}
.thumb.down svg{transform:rotate(180deg)}
.rate .thanks{margin-left:6px}
.comment{display:flex;gap:6px;margin-top:2px}
.comment input{flex:1;min-width:0;border:1px solid #c8cdd9;border-radius:8px;padding:4px 8px;font-size:13px}
.comment button{border:1px solid #c8cdd9;background:#fff;border-radius:8px;padding:2px 10px;cursor:pointer;font-size:13px}
.chips{display:flex;flex-wrap:wrap;justify-content:flex-end;gap:6px;padding:10px 14px 0}
.chips button{border:1px solid var(--accent);background:#fff;color:var(--accent-text);border-radius:999px;padding:5px 12px;font-size:13px;cursor:pointer;text-align:left}
.chips button:hover{background:#eef2fd}
.typing{display:inline-flex;gap:4px}
.typing i{width:6px;height:6px;border-radius:50%;background:#8a93a6;animation:blink 1s infinite}
.typing i:nth-child(2){animation-delay:.15s}.typing i:nth-child(3){animation-delay:.3s}
@keyframes blink{0%,80%,100%{opacity:.25}40%{opacity:1}}
.status{padding:8px 14px;font-size:13px;background:#fff4e0;color:#6b4500;display:flex;gap:8px;align-items:center}
.status[hidden],.lead[hidden],.offer[hidden],.chips[hidden],.comment[hidden]{display:none}
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
  function addText(parent, value) {
    if (value) parent.appendChild(document.createTextNode(value));
  }

  // ---- Markdown: a small safe subset, built as DOM nodes (no HTML is ever parsed) ----
  // Blocks: paragraphs (a single newline is a line break), - * + and 1. lists (nested by indent), ``` code,
  // | tables | (a header row, a --- row, then rows), and # headings (shown bold). Inline: **bold**, *italic*, `code`, [links](https://…) and bare https:// URLs,
  // \-escapes. Links go to http(s) only; any other link (javascript:, data:, …) keeps just its text. Everything
  // else, raw HTML included, is text. Blocks are separated by "\n\n" text nodes (invisible in normal white-space),
  // so a plain-text answer's textContent is the answer as written.
  // A hand-written renderer, not `marked` (16 KB gzipped, twice the whole widget, and it produces HTML strings).
  const INLINE =
    '\\\\([\\\\`*_[\\]()#+\\-.!>])' + // 1: an escaped character
    '|(`+)([^`]|[^`][\\s\\S]*?[^`])\\2(?!`)' + // 2, 3: code
    '|\\[([^\\]\\n]+)\\]\\(\\s*([^\\s()]*(?:\\([^\\s()]*\\)[^\\s()]*)*)\\s*\\)' + // 4, 5: [label](url)
    '|(\\*\\*|__)(?=\\S)([\\s\\S]*?\\S)\\6(?!\\*)' + // 6, 7: bold (***x*** is bold italic)
    '|([*_])(?=[^\\s*_])([\\s\\S]*?[^\\s*_])\\8(?!\\8)' + // 8, 9: italic
    "|(https?:\\/\\/[^\\s<>]*[^\\s<>.,;:!?'\")\\]*_])"; // 10: a bare URL
  function safeUrl(raw) {
    if (!/^https?:\/\//i.test(raw)) return null;
    try {
      const url = new URL(raw);
      return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
    } catch {
      return null;
    }
  }
  function link(parent, href) {
    return parent.appendChild(el('a', { href: href, target: '_blank', rel: 'noopener noreferrer' }));
  }
  function inline(parent, source, inLink) {
    const pattern = new RegExp(INLINE, 'gi'); // one per call: this recurses
    let done = 0;
    let m;
    while ((m = pattern.exec(source))) {
      const start = m.index;
      const mark = m[6] || m[8] || '';
      // _ inside a word (snake_case) is no emphasis, nor is the second * of an unclosed **; a link or URL
      // inside a link's label stays text.
      const intraword = mark[0] === '_' && (/\w/.test(source[start - 1] || '') || /\w/.test(source[pattern.lastIndex] || ''));
      if (intraword || (m[8] && source[start - 1] === m[8]) || (inLink && (m[4] || m[10]))) {
        pattern.lastIndex = start + 1;
        continue;
      }
      addText(parent, source.slice(done, start));
      done = pattern.lastIndex;
      if (m[1]) addText(parent, m[1]);
      else if (m[2]) parent.appendChild(el('code', { text: m[3] }));
      else if (m[4]) {
        const href = safeUrl(m[5]);
        inline(href ? link(parent, href) : parent, m[4], true);
      } else if (m[6]) inline(parent.appendChild(el('strong')), m[7], inLink);
      else if (m[8]) inline(parent.appendChild(el('em')), m[9], inLink);
      else {
        const href = safeUrl(m[10]);
        if (href) link(parent, href).textContent = m[10];
        else addText(parent, m[10]);
      }
    }
    addText(parent, source.slice(done));
  }
  function markdown(source) {
    const out = document.createDocumentFragment();
    let sink = null; // the paragraph or list item whose lines are being collected: { node, lines }
    let lists = []; // the open lists, outermost first: { indent, ordered, node }
    let code = null; // an open ``` block: { node, lines }
    let table = null; // an open table's body
    const block = (node) => {
      if (out.lastChild) addText(out, '\n\n');
      return out.appendChild(node);
    };
    const flush = () => {
      if (sink) inline(sink.node, sink.lines.join('\n'));
      sink = null;
    };
    const closeCode = () => {
      code.node.textContent = code.lines.join('\n');
      code = null;
    };
    const TABLE_ROW = /^ {0,3}\|.*\|\s*$/;
    const TABLE_RULE = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
    const cells = (row) => row.trim().replace(/^\||\|$/g, '').split('|');
    const row = (parent, line, tag) => {
      const tr = parent.appendChild(el('tr'));
      cells(line).forEach((cell) => inline(tr.appendChild(el(tag)), cell.trim()));
    };
    const lines = String(source).replace(/\r\n?/g, '\n').split('\n');
    let rule = -1; // the index of the table's --- line
    lines.forEach((raw, index) => {
      if (index === rule) return;
      const line = raw.replace(/\t/g, '    ');
      const fence = /^ {0,3}```/.test(line);
      if (code) return fence ? closeCode() : code.lines.push(line);
      if (table && TABLE_ROW.test(line)) return row(table, line, 'td');
      table = null;
      if (TABLE_ROW.test(line) && TABLE_RULE.test(lines[index + 1] || '') && /\|/.test(lines[index + 1])) {
        flush();
        lists = [];
        const node = block(el('table'));
        row(node.appendChild(el('thead')), line, 'th');
        table = node.appendChild(el('tbody'));
        rule = index + 1;
        return;
      }
      if (fence) {
        flush();
        lists = [];
        code = { node: block(el('pre')).appendChild(el('code')), lines: [] };
        return;
      }
      if (!line.trim()) return flush(); // a list stays open across a blank line
      const indent = /^ */.exec(line)[0].length;
      const item = /^ *([-*+]|(\d{1,9})[.)]) +(.*)$/.exec(line);
      if (item) {
        flush();
        const ordered = Boolean(item[2]);
        while (lists.length && lists[lists.length - 1].indent > indent) lists.pop();
        let top = lists[lists.length - 1];
        if (top && indent < top.indent + 2 && top.ordered !== ordered) top = lists.pop() && lists[lists.length - 1];
        if (!top || indent >= top.indent + 2 || top.ordered !== ordered) {
          const node = el(ordered ? 'ol' : 'ul');
          if (ordered && Number(item[2]) !== 1) node.setAttribute('start', String(Number(item[2])));
          if (top) top.node.lastChild.appendChild(node);
          else block(node);
          lists.push((top = { indent: indent, ordered: ordered, node: node }));
        }
        sink = { node: top.node.appendChild(el('li')), lines: [item[3]] };
        return;
      }
      if (lists.length && indent >= 2) {
        // More of the last item: a line break within it, or a new line after its nested list or a blank line.
        const li = lists[lists.length - 1].node.lastChild;
        if (!sink || sink.node !== li) {
          flush();
          sink = { node: li, lines: [''] };
        }
        sink.lines.push(line.trim());
        return;
      }
      if (lists.length) {
        flush();
        lists = [];
      }
      const heading = /^ {0,3}#{1,6} +(.*?)[ #]*$/.exec(line);
      if (heading) {
        flush();
        inline(block(el('p')).appendChild(el('strong')), heading[1]);
        return;
      }
      if (!sink) sink = { node: block(el('p')), lines: [] };
      sink.lines.push(line);
    });
    flush();
    if (code) closeCode();
    return out;
  }

  const ICON_CHAT = 'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z';
  const ICON_CLOSE = 'M5.4 8.6 12 15.2l6.6-6.6L20 10l-8 8-8-8z';
  // Material Design's help (Apache 2.0), and a four-pointed sparkle.
  const ICONS = {
    chat: ICON_CHAT,
    question:
      'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 17h-2v-2h2v2zm2.07-7.75-.9.92C13.45 12.9 13 13.5 13 15h-2v-.5c0-1.1.45-2.1 1.17-2.83l1.24-1.26A2 2 0 1 0 10 9H8a4 4 0 1 1 7.07 2.25z',
    sparkle: 'M12 2l2.4 7.6L22 12l-7.6 2.4L12 22l-2.4-7.6L2 12l7.6-2.4z',
  };
  let launcherIcon = ICON_CHAT;
  let launcherLabel = null;
  const iconPath = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  iconPath.setAttribute('d', ICON_CHAT);
  // Material Design's thumb_up (Apache 2.0); thumbs down is the same, turned over in CSS.
  const ICON_THUMB =
    'M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z';
  function icon(path) {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    if (typeof path === 'string') {
      const node = document.createElementNS('http://www.w3.org/2000/svg', 'path');
      node.setAttribute('d', path);
      path = node;
    }
    svg.appendChild(path);
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
  let avatar = null; // the header's <img>, there only when the agent has an avatar
  const handoffButton = el('button', { type: 'button', class: 'handoff' });
  const closeButton = el('button', { type: 'button', class: 'close', text: '×' });
  const transcript = el('div', { class: 'transcript', role: 'log', 'aria-live': 'polite' });
  const chips = el('div', { class: 'chips', role: 'group', hidden: '' });
  const statusText = el('span');
  const status = el('div', { class: 'status', role: 'alert', hidden: '' }, [statusText]);
  const offerButton = el('button', { type: 'button', class: 'offer', hidden: '' });
  const leadForm = el('form', { class: 'lead', hidden: '', novalidate: '' });
  const input = el('textarea', { id: 'chat-input', rows: '1', maxlength: '10000', autocomplete: 'off' });
  const sendButton = el('button', { type: 'submit' });
  const inputLabel = el('label', { for: 'chat-input', class: 'sr-only' });
  const composer = el('form', { class: 'composer' }, [inputLabel, input, sendButton]);
  const panel = el('section', { class: 'panel', id: 'chat-panel', role: 'dialog', 'aria-labelledby': 'chat-title', hidden: '' }, [
    el('header', {}, pageMode ? [title, handoffButton] : [title, handoffButton, closeButton]),
    el('div', { class: 'scroll' }, [transcript, chips, offerButton, leadForm]),
    status,
    composer,
  ]);
  const launcherText = el('span');
  const launcher = el('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'chat-panel' }, [icon(iconPath), launcherText]);
  // `loading`: the launcher shows once the agent's look is known, never first in the default one.
  const root = el('div', { class: pageMode ? 'root page' : 'root loading' }, pageMode ? [panel] : [launcher, panel]);
  shadow.appendChild(root);

  // The fixed words of the UI, relabelled when the agent's language becomes known (at connect).
  const LABELS = [
    [handoffButton, 'text', 'handoff'],
    [closeButton, 'aria-label', 'closeChat'],
    [transcript, 'aria-label', 'conversation'],
    [chips, 'aria-label', 'suggestions'],
    [offerButton, 'text', 'offer'],
    [leadForm, 'aria-label', 'details'],
    [input, 'placeholder', 'placeholder'],
    [sendButton, 'text', 'send'],
    [inputLabel, 'text', 'message'],
  ];
  function setLanguage(wanted) {
    lang = pickLanguage(wanted);
    LABELS.forEach((label) => {
      if (label[1] === 'text') label[0].textContent = t(label[2]);
      else label[0].setAttribute(label[1], t(label[2]));
    });
    launcher.setAttribute('aria-label', launcherName());
    root.setAttribute('lang', lang);
    if (pageMode) document.documentElement.lang = lang; // the hosted page is the widget's own
  }

  // A labelled launcher is named by its label (what a speech user says), an icon one by "Open chat".
  function launcherName() {
    return panel.hidden ? launcherLabel || t('openChat') : t('closeChat');
  }

  // `config`: the agent as GET widget/v1/chatbots/{id} presents it (read at every load); `look` its promise.
  const state = { session: null, ready: null, busy: false, live: null, config: null, look: null, refused: false };
  /** What the widget knows of the agent: the conversation's, overridden by the fresher config. */
  function agent() {
    return Object.assign({}, state.session && state.session.chatbot, state.config);
  }
  const saved = loadSaved();
  // A returning visitor's saved agent language, else the one the page names (the hosted page does), else auto.
  setLanguage((saved && saved.chatbot && saved.chatbot.language) || script.getAttribute('data-language'));

  function scrollToEnd() {
    const scroller = transcript.parentNode;
    scroller.scrollTop = scroller.scrollHeight;
  }
  /** Adds a message: visitor, operator and note text as text, an agent's (assistant) as Markdown with its sources and rating. */
  function addMessage(role, content, message) {
    const node = transcript.appendChild(el('div', { class: 'msg msg-' + role }));
    if (role === 'assistant') showAnswer(node, message || { content: content });
    else {
      node.textContent = content;
      if (message) node.setAttribute('data-message-id', message.id);
    }
    updateChips();
    scrollToEnd();
    return node;
  }
  /** Fills an assistant bubble (one replace, so the streamed pieces go at once) and, for a stored answer, adds its sources and rating. */
  function showAnswer(bubble, message) {
    const body = markdown(message.content);
    if (bubble.replaceChildren) bubble.replaceChildren(body);
    else {
      bubble.textContent = '';
      bubble.appendChild(body);
    }
    bubble.removeAttribute('data-streaming');
    if (!message.id) return; // the welcome message: the agent's words, but no stored answer to rate
    bubble.setAttribute('data-message-id', message.id);
    const meta = el('div', { class: 'meta' });
    const sources = sourceList(message.sources || [], bubble);
    if (sources) meta.appendChild(sources);
    meta.appendChild(rating(message));
    transcript.insertBefore(meta, bubble.nextSibling);
  }
  /**
   * "Sources:" and each document once: a link when it has a web address, else its title. A document the answer
   * already names (a best-matches answer lists its pages as links) is not repeated.
   */
  function sourceList(sources, bubble) {
    const seen = {};
    const items = [];
    const named = Array.prototype.map.call(bubble.querySelectorAll('a[href], strong'), (node) => (node.getAttribute('href') || node.textContent || '').toLowerCase());
    sources.forEach((source) => {
      const href = safeUrl(String(source.url || ''));
      const label = String(source.title || '').trim() || (href ? new URL(href).hostname : '');
      const key = (href || label).toLowerCase();
      if (!label || seen[key] || named.indexOf(key) !== -1) return;
      seen[key] = true;
      const item = el('li');
      if (href) link(item, href).textContent = label;
      else item.textContent = label;
      items.push(item);
    });
    return items.length ? el('div', { class: 'sources' }, [el('span', { text: t('sources') }), el('ul', {}, items)]) : null;
  }
  /** Thumbs up / down on an answer (the latest counts), and an optional comment after a thumbs down. */
  function rating(message) {
    const row = el('div', { class: 'rate' });
    const buttons = ['up', 'down'].map((value) => {
      const button = el('button', { type: 'button', class: 'thumb ' + value, 'aria-label': t(value), title: t(value), 'aria-pressed': 'false' }, [icon(ICON_THUMB)]);
      button.addEventListener('click', () => choose(value));
      return row.appendChild(button);
    });
    const thanks = el('span', { class: 'thanks', role: 'status' });
    row.appendChild(thanks);
    const field = el('input', { type: 'text', maxlength: '500', 'aria-label': t('comment'), placeholder: t('comment') });
    const form = el('form', { class: 'comment', hidden: '' }, [field, el('button', { type: 'submit', text: t('send') })]);
    const box = el('div', {}, [row, form]);
    let current = message.feedback ? message.feedback.rating : null;
    const show = (value) => buttons.forEach((button, index) => button.setAttribute('aria-pressed', String(['up', 'down'][index] === value)));
    show(current);
    async function post(value, comment) {
      const body = comment ? { rating: value, comment: comment } : { rating: value };
      const response = await fetch(conversationApi('/messages/' + encodeURIComponent(message.id) + '/feedback'), { method: 'POST', headers: headers(), body: JSON.stringify(body) });
      if (!response.ok) throw new Error(politeError(response, await problemOf(response)));
    }
    async function choose(value) {
      if (value === current) return;
      const before = current;
      show((current = value));
      thanks.textContent = '';
      try {
        await post(value);
        form.hidden = value !== 'down';
        if (value === 'down') field.focus();
        else thanks.textContent = t('feedbackThanks');
      } catch (error) {
        show((current = before));
        showStatus(error instanceof TypeError ? t('offline') : error.message);
      }
    }
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const comment = field.value.trim();
      try {
        if (comment) await post('down', comment);
        form.hidden = true;
        thanks.textContent = t('feedbackThanks');
      } catch (error) {
        showStatus(error instanceof TypeError ? t('offline') : error.message);
      }
    });
    return box;
  }
  /** The agent's suggested questions, offered until the visitor has written something. */
  function updateChips() {
    const bot = agent();
    const questions = ownWords(bot).suggested_questions || bot.suggested_questions || [];
    const show = questions.length > 0 && !transcript.querySelector('.msg-user');
    if (show && !chips.firstChild) {
      questions.slice(0, 6).forEach((question) => {
        const chip = chips.appendChild(el('button', { type: 'button', text: question }));
        chip.addEventListener('click', () => send(question));
      });
    }
    chips.hidden = !show;
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
  function conversationApi(suffix) {
    return api('widget/v1/conversations/' + encodeURIComponent(state.session.conversation_id) + suffix);
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
      return t('tooFast', wait > 0 ? t('seconds', Math.ceil(wait)) : t('moment'));
    }
    if (response.status === 409 && problem.code === 'conversation_closed') return t('ended');
    if (response.status === 409 && problem.code === 'chatbot_not_active') return t('paused');
    if (response.status === 403) return t('notHere'); // origin not in allowed_origins
    // The server's validation messages are English: shown in an English widget only.
    if (response.status === 400) return (lang === 'en' && ((problem.errors && problem.errors[0] && problem.errors[0].message) || problem.detail)) || t('check');
    return t('failed');
  }

  // ---- the conversation: restore the saved one, or start a new one ----
  function renderHeader(session) {
    const bot = agent();
    setLanguage(bot.language);
    title.textContent = bot.title || bot.name || 'Chat';
    const lead = session.chatbot && session.chatbot.lead_capture;
    offerButton.hidden = !(lead && lead.enabled) || Boolean(session.lead_sent);
    handoffButton.disabled = Boolean(session.handoff_requested);
  }
  async function startConversation() {
    const locale = browserLocale();
    const response = await fetch(api('widget/v1/chatbots/' + encodeURIComponent(chatbotId) + '/conversations'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(locale ? { locale: locale } : {}),
    });
    if (!response.ok) {
      const problem = await problemOf(response);
      if (problem.code === 'origin_not_allowed') refused();
      const reason = response.status === 404 ? t('missing') : response.status === 409 ? t('closed') : politeError(response, problem);
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
    messages.forEach((message) => addMessage(message.role, message.content, message));
    updateChips();
  }
  async function connect() {
    await state.look;
    if (state.refused) throw Object.assign(new Error(t('notHere')), { final: true });
    let session = loadSaved();
    if (session) {
      const loaded = await loadTranscript(session);
      if (loaded.status === 200) {
        state.session = session;
        renderHeader(session);
        renderTranscript(session, loaded.messages);
        follow(session);
        return;
      }
      if (![401, 403, 404, 409, 410].includes(loaded.status)) throw new Error(t('loadFailed'));
      save(null); // the old conversation is gone or closed: start afresh
    }
    session = await startConversation();
    state.session = session;
    renderHeader(session);
    renderTranscript(session, []);
    follow(session);
  }
  function ensureConnected() {
    if (!state.ready) {
      state.ready = connect().catch((error) => {
        state.ready = null;
        const message = error instanceof TypeError ? t('offline') : error.message;
        showStatus(message, error.final ? null : { label: t('retry'), run: () => ensureConnected().then(clearStatus, () => undefined) });
        throw error;
      });
    }
    return state.ready;
  }
  function startOver() {
    unfollow();
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
        let id = null;
        let retry = 0;
        const data = [];
        block.split('\n').forEach((line) => {
          if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          else if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('retry:')) retry = Number(line.slice(6).trim()) || 0;
        });
        if (data.length) onEvent(type, data.join('\n'), id, retry);
        else if (retry) onEvent('retry', '', null, retry);
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
    showAnswer(bubble, reply);
    scrollToEnd();
    const lead = state.session.chatbot && state.session.chatbot.lead_capture;
    if (lead && lead.enabled && !state.session.lead_sent && OFFERS_CONTACT.indexOf(reply.outcome) !== -1) openLeadForm(false);
  }

  async function send(text) {
    if (state.busy) return;
    clearStatus();
    setBusy(true);
    let mine = null;
    let bubble = null;
    try {
      // Connected first: connecting renders the conversation afresh, which would drop a bubble added before.
      await ensureConnected();
      mine = addMessage('user', text);
      bubble = typingBubble();
      const response = await fetch(conversationApi('/messages'), {
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
          showStatus(response.status === 409 ? t('ended') : t('gone'), { label: t('restart'), run: startOver });
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
        // The question is stored and its answer is owed (a delayed answer, or a person answering): the live
        // stream brings it.
        if (failed) addMessage('note', t('late'));
      }
    } catch (error) {
      if (bubble) bubble.remove();
      if (mine) mine.remove();
      if (error instanceof TypeError) {
        showStatus(t('offline'), { label: t('retry'), run: () => send(text) });
      } else if (!state.session) {
        if (!input.value) input.value = text; // connect() already said why
      } else {
        showStatus(t('failed'));
      }
    } finally {
      setBusy(false);
      updateChips();
    }
  }

  // ---- asking for a person ----
  async function requestHandoff() {
    if (state.busy) return;
    clearStatus();
    setBusy(true);
    handoffButton.disabled = true;
    try {
      await ensureConnected();
      const response = await fetch(conversationApi('/handoff'), { method: 'POST', headers: headers(), body: '{}' });
      if (!response.ok) {
        handoffButton.disabled = false;
        showStatus(politeError(response, await problemOf(response)));
        return;
      }
      const body = await response.json();
      state.session.handoff_requested = true;
      save(state.session);
      if (body.reply) finishReply(addMessage('assistant', ''), body.reply);
      else addMessage('note', t('handoffSent')); // a person's answer comes later, through the live stream
    } catch (error) {
      handoffButton.disabled = false;
      if (state.session) showStatus(error instanceof TypeError ? t('offline') : t('failed'));
    } finally {
      setBusy(false);
    }
  }
  // ---- live: the conversation's events (an operator's reply, a late answer, the conversation closing) ----
  function shown(message) {
    return Boolean(transcript.querySelector('[data-message-id="' + String(message.id).replace(/["\\]/g, '') + '"]'));
  }
  /** A message from the live stream, unless it is on screen already or the exchange in flight shows it. */
  function liveMessage(message) {
    if (!message || !message.id || shown(message)) return;
    if (state.busy && (message.role === 'user' || message.role === 'assistant')) return;
    if (message.role === 'assistant') finishReply(addMessage('assistant', ''), message);
    else addMessage(message.role === 'user' ? 'user' : 'operator', message.content, message);
  }
  function liveConversation(conversation) {
    if (conversation && conversation.status === 'closed') {
      unfollow();
      showStatus(t('ended'), { label: t('restart'), run: startOver });
    }
  }
  /** Follows the conversation over server-sent events, reconnecting by itself with the last event's id. */
  function follow(session) {
    unfollow();
    const live = { abort: new AbortController(), lastId: null, retryMs: 2000, timer: 0 };
    state.live = live;
    const run = async () => {
      let fresh = live.lastId === null;
      // Refused for now (429: too many streams from this address; 503: the service restarting): wait as asked.
      let asked = 0;
      try {
        const response = await fetch(api('widget/v1/conversations/' + encodeURIComponent(session.conversation_id) + '/events'), {
          headers: Object.assign({ accept: 'text/event-stream', authorization: 'Bearer ' + session.visitor_token }, live.lastId ? { 'last-event-id': live.lastId } : {}),
          signal: live.abort.signal,
        });
        // The conversation is gone or the site is not allowed: nothing to follow.
        if ([401, 403, 404, 410].includes(response.status)) return;
        if (response.ok) {
          await readEvents(response, (type, data, id, retry) => {
            if (retry) live.retryMs = retry;
            if (id) live.lastId = id;
            const payload = parse(data);
            if (type === 'message') liveMessage(payload);
            else if (type === 'conversation') liveConversation(payload);
            else if (type === 'ready' && fresh) {
              // What happened between loading the transcript and this stream opening.
              fresh = false;
              loadTranscript(session).then((loaded) => loaded.status === 200 && loaded.messages.forEach(liveMessage), () => undefined);
            }
          });
        } else {
          asked = Math.min(Number(response.headers.get('retry-after')) || 0, 600) * 1000;
          if (response.body) response.body.cancel().catch(() => undefined);
        }
      } catch {
        // Offline or aborted: retried below unless stopped.
      }
      // The server ended the stream (after its lifetime, or at shutdown) or it dropped: resume after the last event.
      if (state.live === live && !live.abort.signal.aborted) live.timer = setTimeout(run, Math.max(live.retryMs, asked));
    };
    run();
  }
  function unfollow() {
    if (!state.live) return;
    state.live.abort.abort();
    clearTimeout(state.live.timer);
    state.live = null;
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
    leadForm.appendChild(el('p', { text: capture.prompt || t('leadPrompt') }));
    fields.forEach((name) => {
      const spec = LEAD_FIELDS[name];
      leadForm.appendChild(el('label', {}, [document.createTextNode(t(spec[0])), el('input', { name: name, type: spec[1], autocomplete: spec[2], maxlength: '200' })]));
    });
    leadForm.appendChild(el('p', { class: 'error', role: 'alert' }));
    const later = el('button', { type: 'button', text: t('later') });
    later.addEventListener('click', () => {
      leadForm.hidden = true;
      offerButton.focus();
    });
    leadForm.appendChild(el('div', { class: 'row' }, [later, el('button', { type: 'submit', text: t('sendDetails') })]));
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
      error.textContent = t('needContact');
      return;
    }
    const submit = leadForm.querySelector('button[type=submit]');
    submit.disabled = true;
    try {
      const response = await fetch(conversationApi('/lead'), {
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
      addMessage('note', t('leadThanks'));
      input.focus();
    } catch {
      error.textContent = t('offlineForm');
    } finally {
      submit.disabled = false;
    }
  }

  // ---- open, close, keys ----
  function open() {
    panel.hidden = false;
    root.classList.add('open');
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', launcherName());
    iconPath.setAttribute('d', ICON_CLOSE);
    input.focus();
    ensureConnected().then(() => input.focus(), () => undefined);
  }
  function close() {
    panel.hidden = true;
    root.classList.remove('open');
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', launcherName());
    iconPath.setAttribute('d', launcherIcon);
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
  handoffButton.addEventListener('click', requestHandoff);
  leadForm.addEventListener('submit', submitLead);

  // ---- the agent's look, read at every page load: a change made in the dashboard shows at the next one ----
  // WCAG relative luminance of #rrggbb.
  function luminance(hex) {
    return [1, 3, 5].reduce((sum, at, i) => {
      const c = parseInt(hex.slice(at, at + 2), 16) / 255;
      return sum + [0.2126, 0.7152, 0.0722][i] * (c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4));
    }, 0);
  }
  function paint(color) {
    const l = luminance(color);
    const onWhite = 1.05 / (l + 0.05);
    const onInk = (l + 0.05) / (luminance('#111827') + 0.05);
    const style = root.style;
    style.setProperty('--accent', color);
    // Text on the colour: white or near-black, whichever contrasts more; the colour as text on white only when readable.
    style.setProperty('--accent-ink', onWhite >= onInk ? '#fff' : '#111827');
    style.setProperty('--accent-text', onWhite >= 4.5 ? color : '#1c2230');
  }
  function httpsUrl(raw) {
    try {
      const url = new URL(raw);
      return url.protocol === 'https:' ? url.href : null;
    } catch {
      return null;
    }
  }
  function applyLook(config) {
    const look = config.appearance || {};
    const launcherLook = look.launcher || {};
    if (/^#[0-9a-f]{6}$/i.test(look.color)) paint(look.color);
    root.classList.toggle('left', look.position === 'left');
    launcherIcon = ICONS[launcherLook.icon] || ICON_CHAT;
    if (panel.hidden) iconPath.setAttribute('d', launcherIcon);
    launcherLabel = launcherLook.label || null;
    launcherText.textContent = launcherLabel || '';
    launcher.classList.toggle('labelled', Boolean(launcherLabel));
    const picture = look.avatar_url && httpsUrl(look.avatar_url);
    if (picture) {
      avatar = avatar || title.parentNode.insertBefore(el('img', { class: 'avatar', alt: '', referrerpolicy: 'no-referrer' }), title);
      avatar.src = picture;
      root.style.setProperty('--avatar', 'url(' + JSON.stringify(picture) + ')');
    } else if (avatar) {
      avatar.remove();
      avatar = null;
    }
    root.classList.toggle('with-avatar', Boolean(picture));
    state.config = config;
    setLanguage(config.language);
    title.textContent = config.title || config.name || 'Chat';
  }
  // The site is not among the agent's allowed origins: the chat says so, and the site's developer learns where to fix it.
  function refused() {
    if (state.refused) return;
    state.refused = true;
    [input, sendButton, handoffButton].forEach((control) => (control.disabled = true));
    const origin = window.location.origin;
    console.warn(
      '[chat widget] The chat is not enabled on ' + origin + ': it is not an allowed origin of AI Agent ' + chatbotId + '. ' +
        'Add ' + origin + ' to the agent\'s allowed origins (dashboard: the agent → Allowed origins; API: allowed_origins).',
    );
  }
  async function loadLook() {
    try {
      const response = await fetch(api('widget/v1/chatbots/' + encodeURIComponent(chatbotId)));
      if (response.ok) applyLook(await response.json());
      else if ((await problemOf(response)).code === 'origin_not_allowed') refused();
    } catch {
      /* unreachable now: the default look; opening the chat says what is wrong */
    }
    root.classList.remove('loading');
  }

  function mount() {
    state.look = loadLook();
    document.body.appendChild(host);
    if (pageMode) open();
  }
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);
})();

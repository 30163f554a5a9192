import { useState, type FormEvent } from 'react';
import { api } from '../api';
import type { Message } from '../types';
import { ErrorText, useAction } from '../ui';

/** A line of the preview transcript: a message, or the note that the answer is still to come. */
type Line = Pick<Message, 'id' | 'role' | 'content'>;

/** A live chat with the agent through the real runtime (drafts included), in a dashboard conversation. */
export function PreviewChat({ agentId, welcome }: { agentId: string; welcome: string | null }) {
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [messages, setMessages] = useState<Line[]>([]);
  const [text, setText] = useState('');
  const [waiting, setWaiting] = useState(false);
  const { error, run } = useAction();

  async function start() {
    const started = await run(() => api<{ conversation: { id: string } }>('POST', `/chatbots/${agentId}/preview`));
    if (started) {
      setConversationId(started.conversation.id);
      setMessages([]);
    }
  }
  async function send(event: FormEvent) {
    event.preventDefault();
    const content = text.trim();
    if (!content || !conversationId) return;
    setText('');
    setWaiting(true);
    const sent = await run(() => api<{ message: Message; reply: Message | null }>('POST', `/chatbots/${agentId}/preview/${conversationId}/messages`, { content }));
    setWaiting(false);
    if (sent) setMessages((list) => [...list, sent.message, ...(sent.reply ? [sent.reply] : [])]);
    if (sent && !sent.reply) setMessages((list) => [...list, { id: `none-${Date.now()}`, role: 'assistant', content: '(no answer yet — it will appear in Conversations)' }]);
  }

  return (
    <section className="card stack preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      {conversationId === null ? (
        <>
          <p className="hint">Talk to this agent as a visitor would. Works for drafts too.</p>
          <button type="button" onClick={() => void start()}>
            Start preview chat
          </button>
        </>
      ) : (
        <>
          <ol className="transcript" aria-live="polite" aria-label="Preview transcript">
            {welcome ? <li className="msg assistant">{welcome}</li> : null}
            {messages.map((m) => (
              <li key={m.id} className={`msg ${m.role}`}>
                <span className="sr-only">{m.role === 'user' ? 'You: ' : 'Agent: '}</span>
                {m.content}
              </li>
            ))}
            {waiting ? <li className="msg assistant typing">Agent is typing…</li> : null}
          </ol>
          <form className="row" onSubmit={send}>
            <label className="grow">
              <span className="sr-only">Message</span>
              <input placeholder="Type a message" value={text} onChange={(e) => setText(e.target.value)} maxLength={10000} />
            </label>
            <button type="submit" disabled={waiting || !text.trim()}>
              Send
            </button>
          </form>
          <button type="button" className="link" onClick={() => void start()}>
            Restart preview
          </button>
        </>
      )}
      <ErrorText error={error} />
    </section>
  );
}

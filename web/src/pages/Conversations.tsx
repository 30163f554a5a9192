import { Fragment, useEffect, useState, type FormEvent } from 'react';
import { api, dayEnd, dayStart, query, when } from '../api';
import { markRead, useLiveReload, useUnread, type LiveEvent } from '../live';
import { Link } from '../router';
import type { Agent, Conversation, Message, Page } from '../types';
import { Badge, ErrorText, PageHeader, useAction, useLoad } from '../ui';

/** Agents of the workspace by id, for names in lists and filters. */
export function useAgents() {
  return useLoad(() => api<Page<Agent>>('GET', '/chatbots?limit=100'), []);
}

/** Under an agent's answer: the documents it used, and the visitor's rating of it. */
function AnswerDetails({ message }: { message: Message }) {
  const sources = message.sources ?? [];
  const { feedback } = message;
  return (
    <>
      {sources.length > 0 ? (
        <span className="msg-note">
          Sources:{' '}
          {sources.map((source, index) => (
            <Fragment key={source.document_id}>
              {index > 0 ? ', ' : ''}
              {source.url ? (
                <a href={source.url} target="_blank" rel="noopener noreferrer">
                  {source.title}
                </a>
              ) : (
                source.title
              )}
            </Fragment>
          ))}
        </span>
      ) : null}
      {feedback ? (
        <span className="msg-note">
          {feedback.rating === 'up' ? 'Rated helpful' : 'Rated unhelpful'} by the visitor{feedback.comment ? `: “${feedback.comment}”` : ''}
        </span>
      ) : null}
    </>
  );
}

/** Whether a conversation waits for a person: the visitor asked for one, it is open, and no operator has answered yet. */
function waiting(c: Conversation): boolean {
  return Boolean(c.handoff_requested_at) && c.mode === 'agent' && c.status === 'open';
}

/** The badge of a conversation waiting for a person; its accessible name says since when. */
function WaitingBadge({ since }: { since: string }) {
  const label = `Waiting for a person since ${when(since)}`;
  return (
    <span className="badge badge-waiting" role="img" aria-label={label} title={label}>
      Waiting for a person
    </span>
  );
}

/** Conversations with filters by agent, status, date and "waiting for a person". */
export function Conversations() {
  const agents = useAgents();
  const [filters, setFilters] = useState({ chatbot_id: '', status: '', from: '', to: '', handoff: '' });
  const [cursor, setCursor] = useState<string | null>(null);
  const list = useLoad(
    () =>
      api<Page<Conversation>>(
        'GET',
        `/conversations${query({ chatbot_id: filters.chatbot_id, status: filters.status, handoff: filters.handoff, created_after: dayStart(filters.from), created_before: dayEnd(filters.to), limit: 25, cursor })}`,
      ),
    [filters, cursor],
  );
  // New conversations, new messages and handoffs show up as they happen.
  useLiveReload((event) => event.type.startsWith('conversation.') || event.type === 'message.created', list.reload);
  const unread = useUnread();
  const names = new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]));
  const setFilter = (changes: Partial<typeof filters>) => {
    setCursor(null);
    setFilters({ ...filters, ...changes });
  };
  return (
    <>
      <PageHeader title="Conversations" />
      <form className="filters row" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Agent
          <select value={filters.chatbot_id} onChange={(e) => setFilter({ chatbot_id: e.target.value })}>
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
          <select value={filters.status} onChange={(e) => setFilter({ status: e.target.value })}>
            <option value="">Any</option>
            <option value="open">Open</option>
            <option value="closed">Closed</option>
          </select>
        </label>
        <label>
          From
          <input type="date" value={filters.from} onChange={(e) => setFilter({ from: e.target.value })} />
        </label>
        <label>
          To
          <input type="date" value={filters.to} onChange={(e) => setFilter({ to: e.target.value })} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={filters.handoff === 'requested'} onChange={(e) => setFilter({ handoff: e.target.checked ? 'requested' : '' })} />
          Waiting for a person
        </label>
      </form>
      <ErrorText error={list.error} />
      {list.data && list.data.data.length === 0 ? (
        <p className="empty">
          {filters.handoff ? 'No conversation is waiting for a person.' : 'No conversations match. They appear when visitors chat with a published agent.'}
        </p>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Visitor</th>
              <th scope="col">Agent</th>
              <th scope="col">Status</th>
              <th scope="col">Channel</th>
              <th scope="col">Messages</th>
              <th scope="col">Last message</th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/conversations/${c.id}`}>{c.visitor.name || c.visitor.email || 'Visitor'}</Link>
                  {unread.get(c.id) ? <span className="count" aria-label={`${unread.get(c.id)} new`}>{unread.get(c.id)}</span> : null}
                </td>
                <td>{names.get(c.chatbot_id) ?? c.chatbot_id}</td>
                <td>
                  <Badge value={c.status} /> {c.mode === 'human' ? <Badge value="human" /> : null}{' '}
                  {waiting(c) ? <WaitingBadge since={c.handoff_requested_at!} /> : null}
                </td>
                <td>{c.channel}</td>
                <td>{c.message_count}</td>
                <td>{when(c.last_message_at ?? c.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {list.data?.next_cursor ? (
        <button type="button" className="secondary" onClick={() => setCursor(list.data!.next_cursor)}>
          Next page
        </button>
      ) : null}
    </>
  );
}

/** One conversation: the transcript, an operator's reply (the agent goes silent), hand back, close. */
export function ConversationDetail({ id }: { id: string }) {
  const conversation = useLoad(() => api<Conversation>('GET', `/conversations/${id}`), [id]);
  const messages = useLoad(() => api<Page<Message>>('GET', `/conversations/${id}/messages?limit=100`), [id]);
  const [reply, setReply] = useState('');
  const action = useAction();
  const refresh = () => {
    conversation.reload();
    messages.reload();
  };
  // The visitor's messages, the agent's answers and status changes appear as they happen.
  useLiveReload((event: LiveEvent) => (event.type === 'message.created' ? event.data.conversation_id === id : event.type === 'conversation.updated' && event.data.id === id), refresh);
  const unread = useUnread();
  useEffect(() => markRead(id), [id, unread]);
  async function send(event: FormEvent) {
    event.preventDefault();
    if (await action.run(() => api('POST', `/conversations/${id}/messages`, { content: reply }))) {
      setReply('');
      refresh();
    }
  }
  async function post(path: string) {
    if (await action.run(() => api('POST', `/conversations/${id}/${path}`))) refresh();
  }
  const c = conversation.data;
  if (conversation.error) {
    return (
      <>
        <ErrorText error={conversation.error} />
        <Link to="/conversations">Back to conversations</Link>
      </>
    );
  }
  if (!c) return <p className="loading">Loading…</p>;
  return (
    <>
      <p className="crumbs">
        <Link to="/conversations">Conversations</Link> / {c.visitor.name || 'Visitor'}
      </p>
      <PageHeader title={`Conversation with ${c.visitor.name || 'a visitor'}`}>
        <Badge value={c.status} />
        <Badge value={c.mode === 'human' ? 'human' : 'agent'} />
        {waiting(c) ? <WaitingBadge since={c.handoff_requested_at!} /> : null}
        {c.mode === 'human' && c.status === 'open' ? (
          <button type="button" className="secondary" onClick={() => void post('hand-back')}>
            Hand back to agent
          </button>
        ) : null}
        {c.status === 'open' ? (
          <button type="button" className="danger" onClick={() => void post('close')}>
            Close conversation
          </button>
        ) : null}
      </PageHeader>
      <p className="hint">
        Channel {c.channel} · started {when(c.created_at)} {c.visitor.email ? `· ${c.visitor.email}` : ''}
      </p>
      <ol className="transcript card" aria-label="Transcript">
        {(messages.data?.data ?? []).map((m) => (
          <li key={m.id} className={`msg ${m.role}`}>
            <span className="who">{m.role === 'user' ? 'Visitor' : m.role === 'assistant' ? 'Agent' : 'Operator'}</span>
            {m.content}
            <AnswerDetails message={m} />
            <time dateTime={m.created_at}>{when(m.created_at)}</time>
          </li>
        ))}
      </ol>
      {c.status === 'open' ? (
        <form className="stack card" onSubmit={send}>
          <label>
            Reply as operator
            <textarea rows={3} required aria-describedby="reply-hint" value={reply} onChange={(e) => setReply(e.target.value)} />
          </label>
          <span id="reply-hint" className="hint under">Replying takes over from the agent: it stays silent until you hand the conversation back.</span>
          <div>
            <button type="submit" disabled={action.busy || !reply.trim()}>
              Send reply
            </button>
          </div>
        </form>
      ) : null}
      <ErrorText error={action.error} />
    </>
  );
}

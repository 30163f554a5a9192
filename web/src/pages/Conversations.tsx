import { Fragment, useEffect, useState, type FormEvent } from 'react';
import { api, dayEnd, dayStart, query, when } from '../api';
import { markRead, useLiveInvalidate, useUnread, type LiveEvent } from '../live';
import { Link } from '../router';
import { useApi } from '../queries';
import type { AgentList, Conversation, ConversationList, Message, MessageList } from '../types';
import { Badge, ErrorText, PageHeader, useAction } from '../ui';

/** Agents of the workspace by id, for names in lists and filters. */
export function useAgents() {
  return useApi<AgentList>('/chatbots?limit=100');
}

/** Under an agent's answer: the documents it used, and the visitor's rating of it. */
function AnswerDetails({ message }: { message: Message }) {
  const { sources, feedback } = message;
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

const SPEAKERS = { user: 'Visitor', assistant: 'Agent', operator: 'Operator' } as const;

/** Who the visitor is, as far as they said: the lead's or the given name, else the email, else "Visitor". */
function visitorName(c: Conversation): string {
  return c.visitor.name || c.visitor.email || 'Visitor';
}

/** One conversation in the inbox: who, the newest message, unread count, agent, channel, state, last activity. */
function InboxRow({ c, unread, agent }: { c: Conversation; unread: number; agent: string }) {
  return (
    <tr className={unread ? 'unread' : undefined}>
      <td className="who">
        <Link to={`/conversations/${c.id}`}>{visitorName(c)}</Link>
        {unread ? <span className="count" aria-label={`${unread} new`}>{unread}</span> : null}
        {c.visitor.name && c.visitor.email ? <span className="hint email">{c.visitor.email}</span> : null}
      </td>
      <td className="preview">
        {c.last_message ? (
          <span className="clamp">
            <span className="speaker">{SPEAKERS[c.last_message.role]}:</span> {c.last_message.content}
          </span>
        ) : (
          <span className="hint">No messages yet</span>
        )}
      </td>
      <td className="agent">{agent}</td>
      <td className="channel">{c.channel}</td>
      <td className="state">
        <Badge value={c.status} /> {c.mode === 'human' ? <Badge value="human" /> : null}{' '}
        {waiting(c) ? <WaitingBadge since={c.handoff_requested_at!} /> : null}
      </td>
      <td className="when">
        <time dateTime={c.last_message_at ?? c.created_at}>{when(c.last_message_at ?? c.created_at)}</time>
      </td>
    </tr>
  );
}

/** The inbox: conversations with search over messages, filters, unread state and export. */
export function Conversations() {
  const agents = useAgents();
  const [filters, setFilters] = useState({ q: '', chatbot_id: '', status: '', channel: '', mode: '', from: '', to: '', handoff: '' });
  const [search, setSearch] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const params = {
    q: filters.q,
    chatbot_id: filters.chatbot_id,
    status: filters.status,
    channel: filters.channel,
    mode: filters.mode,
    handoff: filters.handoff,
    created_after: dayStart(filters.from),
    created_before: dayEnd(filters.to),
  };
  const list = useApi<ConversationList>(`/conversations${query({ ...params, limit: 25, cursor })}`);
  // New conversations, new messages and handoffs show up as they happen.
  useLiveInvalidate((event) => event.type.startsWith('conversation.') || event.type === 'message.created', '/conversations');
  const unread = useUnread();
  const names = new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]));
  const setFilter = (changes: Partial<typeof filters>) => {
    setCursor(null);
    setFilters({ ...filters, ...changes });
  };
  const submitSearch = (event: FormEvent) => {
    event.preventDefault();
    setFilter({ q: search.trim() });
  };
  const filtered = Object.values(filters).some(Boolean);
  return (
    <>
      <PageHeader title="Conversations">
        <a className="button secondary" href={`/app/api/conversations/export${query({ ...params, format: 'csv' })}`} download>
          Export CSV
        </a>
        <a className="button secondary" href={`/app/api/conversations/export${query({ ...params, format: 'jsonl' })}`} download>
          Export JSON Lines
        </a>
      </PageHeader>
      <form className="row search" role="search" onSubmit={submitSearch}>
        <label className="grow">
          Search messages
          <input type="search" value={search} placeholder="Words a message contains" onChange={(e) => setSearch(e.target.value)} maxLength={200} />
        </label>
        <button type="submit">Search</button>
      </form>
      <form className="filters row inbox-filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
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
          Channel
          <select value={filters.channel} onChange={(e) => setFilter({ channel: e.target.value })}>
            <option value="">Any</option>
            <option value="widget">Widget</option>
            <option value="api">API</option>
            <option value="dashboard">Dashboard</option>
          </select>
        </label>
        <label>
          Answered by
          <select value={filters.mode} onChange={(e) => setFilter({ mode: e.target.value })}>
            <option value="">Anyone</option>
            <option value="agent">The agent</option>
            <option value="human">An operator</option>
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
          {filters.handoff
            ? 'No conversation is waiting for a person.'
            : filtered
              ? 'No conversations match.'
              : 'No conversations match. They appear when visitors chat with a published agent.'}
        </p>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <table className="inbox">
          <caption className="sr-only">Conversations, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Visitor</th>
              <th scope="col">Last message</th>
              <th scope="col">Agent</th>
              <th scope="col">Channel</th>
              <th scope="col">State</th>
              <th scope="col">Last activity</th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((c) => (
              <InboxRow key={c.id} c={c} unread={unread.get(c.id) ?? 0} agent={names.get(c.chatbot_id) ?? c.chatbot_id} />
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
  const conversation = useApi<Conversation>(`/conversations/${id}`);
  const messages = useApi<MessageList>(`/conversations/${id}/messages?limit=100`);
  const [reply, setReply] = useState('');
  // A reply, hand-back or close changes the conversation, its messages and the inbox.
  const action = useAction('/conversations');
  // The visitor's messages, the agent's answers and status changes appear as they happen.
  useLiveInvalidate((event: LiveEvent) => (event.type === 'message.created' ? event.data.conversation_id === id : event.type === 'conversation.updated' && event.data.id === id), `/conversations/${id}`);
  const unread = useUnread();
  useEffect(() => markRead(id), [id, unread]);
  async function send(event: FormEvent) {
    event.preventDefault();
    if (await action.run(() => api('POST', `/conversations/${id}/messages`, { content: reply }))) setReply('');
  }
  async function post(path: string) {
    await action.run(() => api('POST', `/conversations/${id}/${path}`));
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
        <Link to="/conversations">Conversations</Link> / {visitorName(c)}
      </p>
      <PageHeader title={`Conversation with ${c.visitor.name || c.visitor.email || 'a visitor'}`}>
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

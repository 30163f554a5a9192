import { keepPreviousData, useQueries } from '@tanstack/react-query';
import { useState } from 'react';
import { api, daysAgo, query } from '../api';
import { keyOf, useApi } from '../queries';
import type { AnalyticsSummary } from '../types';
import { PageHeader, TableScroll } from '../ui';
import { useAgents } from './Conversations';
import { UnansweredQuestions } from './UnansweredQuestions';

/** A share as a whole percentage; a dash when there is nothing to divide. */
const percent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 100)}%`);

/** A bar chart of one daily series (SVG), with a text table alternative for screen readers. */
function DailyChart({ title, series, color }: { title: string; series: { date: string; value: number }[]; color: string }) {
  const max = Math.max(1, ...series.map((s) => s.value));
  const width = 320;
  const height = 110;
  const bar = width / Math.max(1, series.length);
  return (
    <figure className="card chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={`${title} per day, at most ${max}`}>
        <line x1={0} y1={height} x2={width} y2={height} stroke="#cfd5e2" />
        {series.map((s, i) => {
          const h = (s.value / max) * (height - 10);
          return (
            <rect key={s.date} x={i * bar + bar * 0.15} y={height - h} width={bar * 0.7} height={h} fill={color} rx={2}>
              <title>{`${s.date}: ${s.value}`}</title>
            </rect>
          );
        })}
        <text x={0} y={height + 15} fontSize={10} fill="#5b6478">{series[0]?.date}</text>
        <text x={width} y={height + 15} fontSize={10} fill="#5b6478" textAnchor="end">{series[series.length - 1]?.date}</text>
        <text x={4} y={12} fontSize={10} fill="#5b6478">{max}</text>
      </svg>
    </figure>
  );
}

/** Analytics: totals and per-day charts for a chosen period, the agents compared, and the unanswered questions. */
export function Analytics() {
  const agents = useAgents();
  const [from, setFrom] = useState(daysAgo(29));
  const [to, setTo] = useState(daysAgo(0));
  const [agentId, setAgentId] = useState('');
  const summaryPath = (chatbotId: string) => `/analytics${query({ from, to, chatbot_id: chatbotId })}`;
  const summary = useApi<AnalyticsSummary>(summaryPath(agentId));
  const agentList = (agents.data?.data ?? []).slice(0, 20);
  // One cached summary per agent; the table shows once all of them are in.
  const compared = useQueries({
    queries: agentList.map((agent) => ({ queryKey: keyOf(summaryPath(agent.id)), queryFn: () => api<AnalyticsSummary>('GET', summaryPath(agent.id)), placeholderData: keepPreviousData })),
    combine: (results) => (results.every((result) => result.data) ? results.map((result, i) => ({ agent: agentList[i]!, summary: result.data! })) : undefined),
  });
  const preset = (days: number) => {
    setFrom(daysAgo(days - 1));
    setTo(daysAgo(0));
  };
  const s = summary.data;
  const maxConversations = Math.max(1, ...(compared ?? []).map((c) => c.summary.conversations.total));
  return (
    <>
      <PageHeader title="Analytics" />
      <form className="filters row" aria-label="Period" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
        </label>
        <div className="row" role="group" aria-label="Quick periods">
          <button type="button" className="secondary small" onClick={() => preset(7)}>Last 7 days</button>
          <button type="button" className="secondary small" onClick={() => preset(30)}>Last 30 days</button>
          <button type="button" className="secondary small" onClick={() => preset(90)}>Last 90 days</button>
        </div>
        <label>
          Agent
          <select value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">All agents</option>
            {agentList.map((a) => (
              <option key={a.id} value={a.id}>{a.name}</option>
            ))}
          </select>
        </label>
      </form>
      {summary.error ? <p className="error" role="alert">{summary.error.message}</p> : null}
      {s ? (
        <>
          <dl className="totals">
            <div className="card"><dt>Conversations</dt><dd>{s.conversations.total}</dd></div>
            <div className="card"><dt>Messages</dt><dd>{s.messages.total}</dd></div>
            <div className="card"><dt>Leads</dt><dd>{s.leads.total}</dd></div>
            <div className="card"><dt>Lead conversion</dt><dd>{Math.round(s.leads.conversion_rate * 100)}%</dd></div>
            <div className="card"><dt>Messages per conversation</dt><dd>{s.average_messages_per_conversation.toFixed(1)}</dd></div>
          </dl>
          <h2 id="answers-title">Answers</h2>
          <dl className="totals" aria-labelledby="answers-title">
            <div className="card"><dt>Answer rate</dt><dd>{percent(s.answers.answer_rate)}</dd></div>
            <div className="card"><dt>Answered</dt><dd>{s.answers.answered}</dd></div>
            <div className="card"><dt>Unanswered</dt><dd>{s.answers.unanswered}</dd></div>
            <div className="card"><dt>Rated helpful</dt><dd>{s.answers.feedback_up}</dd></div>
            <div className="card"><dt>Rated unhelpful</dt><dd>{s.answers.feedback_down}</dd></div>
            <div className="card"><dt>Asked for a person</dt><dd>{s.answers.handoffs}</dd></div>
          </dl>
          <div className="charts">
            <DailyChart title="Conversations" color="#2f5bd3" series={s.daily.map((d) => ({ date: d.date, value: d.conversations }))} />
            <DailyChart title="Messages" color="#1f9d74" series={s.daily.map((d) => ({ date: d.date, value: d.messages }))} />
            <DailyChart title="Leads" color="#c2750e" series={s.daily.map((d) => ({ date: d.date, value: d.leads }))} />
          </div>
        </>
      ) : null}
      <section className="card" aria-labelledby="compare-title">
        <h2 id="compare-title">Agents compared</h2>
        {agents.data && agents.data.data.length === 0 ? <p className="hint">No agents yet.</p> : null}
        <TableScroll label="Agents compared">
        <table>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Conversations</th>
              <th scope="col">Messages</th>
              <th scope="col">Leads</th>
              <th scope="col">Answer rate</th>
              <th scope="col">Asked for a person</th>
            </tr>
          </thead>
          <tbody>
            {(compared ?? []).map(({ agent, summary: a }) => (
              <tr key={agent.id}>
                <td>{agent.name}</td>
                <td>
                  <span className="meter" aria-hidden="true" style={{ width: `${(a.conversations.total / maxConversations) * 8}rem` }} />
                  {a.conversations.total}
                </td>
                <td>{a.messages.total}</td>
                <td>{a.leads.total}</td>
                <td>{percent(a.answers.answer_rate)}</td>
                <td>{a.answers.handoffs}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </TableScroll>
      </section>
      <UnansweredQuestions from={from} to={to} agentId={agentId} names={new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]))} />
    </>
  );
}

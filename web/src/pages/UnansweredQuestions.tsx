import { Fragment, useEffect, useRef, useState } from 'react';
import { query, when } from '../api';
import { useApi } from '../queries';
import type { UnansweredQuestion, UnansweredQuestionList } from '../types';
import { ErrorText } from '../ui';
import { HandWrittenForm } from './SourceForms';

/** The longest question a Q&A source takes (an unanswered question is kept up to 2,000 characters). */
const MAX_QA_QUESTION = 1000;

const keyOf = (q: UnansweredQuestion) => `${q.chatbot_id} ${q.normalized}`;

/**
 * The questions the agents could not answer in the period, most recent first; each can become a Q&A source
 * of its agent in one step: an inline form with the question prefilled and an answer to write.
 */
export function UnansweredQuestions({ from, to, agentId, names }: { from: string; to: string; agentId: string; names: Map<string, string> }) {
  const list = useApi<UnansweredQuestionList>(`/analytics/unanswered${query({ from, to, chatbot_id: agentId, limit: 50 })}`);
  const [open, setOpen] = useState<string | null>(null);
  const [added, setAdded] = useState<Set<string>>(new Set());
  const formRow = useRef<HTMLTableRowElement>(null);
  // The answer is what is left to write: focus it when a form opens.
  useEffect(() => formRow.current?.querySelector('textarea')?.focus(), [open]);
  const rows = list.data?.data ?? [];
  return (
    <section className="card" aria-labelledby="unanswered-title">
      <h2 id="unanswered-title">Unanswered questions</h2>
      <p className="hint">Questions the agents could not answer from their knowledge, grouped however they were worded. Add an answer and the agent uses it from then on.</p>
      <ErrorText error={list.error} />
      {list.data && rows.length === 0 ? <p className="hint">No unanswered questions in this period.</p> : null}
      {rows.length > 0 ? (
        <table aria-labelledby="unanswered-title">
          <thead>
            <tr>
              <th scope="col">Question</th>
              <th scope="col" className="num">Times asked</th>
              <th scope="col">Last asked</th>
              <th scope="col">Agent</th>
              <th scope="col">
                <span className="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((q) => {
              const key = keyOf(q);
              return (
                <Fragment key={key}>
                  <tr>
                    <td>{q.question}</td>
                    <td className="num">{q.count}</td>
                    <td>{when(q.last_asked_at)}</td>
                    <td>{names.get(q.chatbot_id) ?? q.chatbot_id}</td>
                    <td>
                      {added.has(key) ? (
                        <span className="badge badge-added" role="status">
                          Added as Q&amp;A
                        </span>
                      ) : (
                        <button
                          type="button"
                          className="secondary small"
                          aria-expanded={open === key}
                          aria-label={`Add as Q&A: ${q.question}`}
                          onClick={() => setOpen(open === key ? null : key)}
                        >
                          Add as Q&amp;A
                        </button>
                      )}
                    </td>
                  </tr>
                  {open === key ? (
                    <tr className="qa-form" ref={formRow}>
                      <td colSpan={5}>
                        <HandWrittenForm
                          type="qa"
                          agentId={q.chatbot_id}
                          initial={{ question: q.question.slice(0, MAX_QA_QUESTION) }}
                          onAdded={() => {
                            setAdded(new Set(added).add(key));
                            setOpen(null);
                          }}
                        >
                          <button type="button" className="secondary" onClick={() => setOpen(null)}>
                            Cancel
                          </button>
                        </HandWrittenForm>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

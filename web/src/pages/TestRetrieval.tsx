import { useState, type FormEvent } from 'react';
import { api, query } from '../api';
import type { KnowledgeHit, Source } from '../types';
import { ErrorText, useAction } from '../ui';
import { sourceName } from './SourceItem';

const EXCERPT = 320;

/** "Test retrieval": what the agent would find in its sources for a question (the chunks, best first). */
export function TestRetrieval({ agentId, sources }: { agentId: string; sources: Source[] }) {
  const [question, setQuestion] = useState('');
  const [hits, setHits] = useState<KnowledgeHit[] | null>(null);
  const { busy, error, run } = useAction();
  const names = new Map(sources.map((s) => [s.id, sourceName(s)]));

  async function submit(event: FormEvent) {
    event.preventDefault();
    const found = await run(() => api<{ data: KnowledgeHit[] }>('GET', `/chatbots/${agentId}/knowledge/search${query({ q: question.trim(), limit: 5 })}`));
    if (found) setHits(found.data);
  }
  return (
    <section className="stack retrieval" aria-labelledby="retrieval-title">
      <h3 id="retrieval-title">Test retrieval</h3>
      <form className="row" onSubmit={submit} aria-label="Test retrieval">
        <label className="grow">
          Ask a question
          <input required maxLength={1000} placeholder="e.g. What is the returns policy?" value={question} onChange={(e) => setQuestion(e.target.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Search sources
        </button>
      </form>
      <ErrorText error={error} />
      {hits === null ? null : hits.length === 0 ? (
        <p className="empty" role="status">Nothing found: the agent would answer this without its sources.</p>
      ) : (
        <ol className="hits" aria-label="Chunks found">
          {hits.map((hit) => (
            <li key={`${hit.document_id}-${hit.content.slice(0, 40)}`} className="hit">
              <div className="hit-head">
                <strong>{hit.url ? <a href={hit.url} target="_blank" rel="noreferrer">{hit.title}</a> : hit.title}</strong>
                <span className="hint">score {hit.score.toFixed(2)}</span>
              </div>
              <p className="excerpt">{hit.content.length > EXCERPT ? `${hit.content.slice(0, EXCERPT)}…` : hit.content}</p>
              <p className="hint">Source: {names.get(hit.source_id) ?? hit.source_id}</p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

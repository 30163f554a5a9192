import { useRef, useState, type DragEvent, type FormEvent, type ReactNode } from 'react';
import { api, upload } from '../api';
import type { Source } from '../types';
import { ErrorText, useAction } from '../ui';

type Kind = 'website' | 'files' | 'text' | 'qa';

const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'website', label: 'Website' },
  { kind: 'files', label: 'Files' },
  { kind: 'text', label: 'Text' },
  { kind: 'qa', label: 'Q&A' },
];

/** What the file input offers; the server decides by content (PDF, DOCX, Markdown, plain text, HTML). */
const ACCEPT = '.pdf,.docx,.md,.markdown,.txt,.html,.htm,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document,text/markdown,text/plain,text/html';

/** The forms that add a source: a website to crawl, files (drag and drop or a file input), a text, a Q&A pair. */
export function AddSource({ agentId, onAdded }: { agentId: string; onAdded: (source: Source) => void }) {
  const [kind, setKind] = useState<Kind>('website');
  return (
    <section className="stack add-source" aria-labelledby="add-source-title">
      <h3 id="add-source-title">Add a source</h3>
      <div className="segmented" role="group" aria-label="Kind of source">
        {KINDS.map((k) => (
          <button key={k.kind} type="button" className={kind === k.kind ? '' : 'secondary'} aria-pressed={kind === k.kind} onClick={() => setKind(k.kind)}>
            {k.label}
          </button>
        ))}
      </div>
      {kind === 'website' ? <WebsiteForm agentId={agentId} onAdded={onAdded} /> : null}
      {kind === 'files' ? <FileDrop agentId={agentId} onAdded={onAdded} /> : null}
      {kind === 'text' || kind === 'qa' ? <HandWrittenForm key={kind} type={kind} agentId={agentId} onAdded={onAdded} /> : null}
    </section>
  );
}

interface FormProps {
  agentId: string;
  onAdded: (source: Source) => void;
}

function WebsiteForm({ agentId, onAdded }: FormProps) {
  const [url, setUrl] = useState('');
  const [maxPages, setMaxPages] = useState('');
  const { busy, error, run } = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    const body = { type: 'website', url: url.trim(), ...(maxPages ? { crawl: { max_pages: Number(maxPages) } } : {}) };
    const created = await run(() => api<Source>('POST', `/chatbots/${agentId}/sources`, body));
    if (created) {
      setUrl('');
      setMaxPages('');
      onAdded(created);
    }
  }
  return (
    <form className="stack" onSubmit={submit} aria-label="Add a website">
      <div className="row">
        <label className="grow">
          Website URL
          <input type="url" required maxLength={2048} placeholder="https://www.example.com/" value={url} onChange={(e) => setUrl(e.target.value)} />
        </label>
        <label className="narrow">
          Max pages (optional)
          <input type="number" min={1} step={1} placeholder="50" value={maxPages} onChange={(e) => setMaxPages(e.target.value)} />
        </label>
      </div>
      <p className="hint under">The pages linked from this address (same site, robots.txt honoured) are read and kept up to date on re-sync.</p>
      <ErrorText error={error} />
      <button type="submit" disabled={busy}>
        Add website
      </button>
    </form>
  );
}

/** Files by drag and drop onto the zone, or through the file input inside it (keyboard and screen readers). */
function FileDrop({ agentId, onAdded }: FormProps) {
  const [over, setOver] = useState(false);
  const [sending, setSending] = useState<string | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const input = useRef<HTMLInputElement>(null);

  async function send(files: File[]) {
    const failed: string[] = [];
    for (const file of files) {
      setSending(file.name);
      const form = new FormData();
      form.append('file', file, file.name);
      try {
        onAdded(await upload<Source>(`/chatbots/${agentId}/sources`, form));
      } catch (failure) {
        failed.push(`${file.name}: ${failure instanceof Error ? failure.message : String(failure)}`);
      }
    }
    setSending(null);
    setErrors(failed);
    if (input.current) input.current.value = '';
  }
  function drop(event: DragEvent) {
    event.preventDefault();
    setOver(false);
    const files = [...event.dataTransfer.files];
    if (files.length > 0) void send(files);
  }
  return (
    <div className="stack">
      <div
        className={`drop-zone${over ? ' over' : ''}`}
        data-testid="drop-zone"
        onDragEnter={(e) => { e.preventDefault(); setOver(true); }}
        onDragOver={(e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
      >
        <p>Drop PDF, DOCX, Markdown, text or HTML files here</p>
        <label className="file-pick">
          or choose files
          <input ref={input} type="file" multiple accept={ACCEPT} disabled={sending !== null} onChange={(e) => void send([...(e.target.files ?? [])])} />
        </label>
      </div>
      <p role="status" className="hint upload-status">{sending ? `Uploading ${sending}…` : ''}</p>
      {errors.map((message) => (
        <ErrorText key={message} error={message} />
      ))}
    </div>
  );
}

/** A hand-written source of two fields: a text (title, content) or a Q&A pair (question, answer). */
const HAND_WRITTEN = {
  text: {
    name: 'Add a text',
    button: 'Add text',
    fields: [
      { key: 'title', label: 'Text title', maxLength: 200, rows: 0 },
      { key: 'content', label: 'Text content', maxLength: 200000, rows: 5 },
    ],
  },
  qa: {
    name: 'Add a question and answer',
    button: 'Add Q&A',
    fields: [
      { key: 'question', label: 'Question', maxLength: 1000, rows: 0 },
      { key: 'answer', label: 'Answer', maxLength: 20000, rows: 3 },
    ],
  },
} as const;

/**
 * The form of a text or Q&A source; `initial` prefills it and `children` sit beside its button (the analytics
 * page's "Add as Q&A": the unanswered question prefilled, and a Cancel).
 */
export function HandWrittenForm({ agentId, onAdded, type, initial = {}, children }: FormProps & { type: keyof typeof HAND_WRITTEN; initial?: Record<string, string>; children?: ReactNode }) {
  const form = HAND_WRITTEN[type];
  const [values, setValues] = useState<Record<string, string>>(initial);
  const { busy, error, run } = useAction();
  async function add(event: FormEvent) {
    event.preventDefault();
    const created = await run(() => api<Source>('POST', `/chatbots/${agentId}/sources`, { type, ...values }));
    if (created) {
      setValues({});
      onAdded(created);
    }
  }
  const submit = (
    <button type="submit" disabled={busy}>
      {form.button}
    </button>
  );
  return (
    <form className="stack" onSubmit={add} aria-label={form.name}>
      {form.fields.map((field) => {
        const props = { required: true, maxLength: field.maxLength, value: values[field.key] ?? '', onChange: (e: { target: { value: string } }) => setValues({ ...values, [field.key]: e.target.value }) };
        return (
          <label key={field.key}>
            {field.label}
            {field.rows ? <textarea rows={field.rows} {...props} /> : <input {...props} />}
          </label>
        );
      })}
      <ErrorText error={error} />
      {children ? (
        <div className="actions">
          {submit}
          {children}
        </div>
      ) : (
        submit
      )}
    </form>
  );
}

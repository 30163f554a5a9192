import type { FastifyInstance } from 'fastify';
import { ERROR_CODES, problemType } from './errors.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a generated document

const escape = (text: unknown) =>
  String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const inlineCode = (text: string) => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

function schemaSummary(schema: Json | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop()!;
  if (schema.anyOf) return (schema.anyOf as Json[]).map(schemaSummary).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === 'array') return `${schemaSummary(schema.items)}[]`;
  return String(schema.type ?? 'object') + (schema.format ? ` (${schema.format})` : '');
}

function fieldsTable(schema: Json | undefined): string {
  const properties = schema?.properties as Json | undefined;
  if (!properties) return '';
  const required = new Set<string>(schema?.required ?? []);
  const rows = Object.entries(properties)
    .map(([name, s]) => `<tr><td><code>${escape(name)}</code>${required.has(name) ? ' *' : ''}</td><td>${escape(schemaSummary(s))}</td><td>${inlineCode(s.description ?? '')}</td></tr>`)
    .join('');
  return `<table><tr><th>Field</th><th>Type</th><th>Notes</th></tr>${rows}</table>`;
}

function operationHtml(method: string, path: string, op: Json, schemas: Json): string {
  const params = (op.parameters ?? []) as Json[];
  const paramRows = params
    .map((p) => `<tr><td><code>${escape(p.name)}</code> (${escape(p.in)})${p.required ? ' *' : ''}</td><td>${escape(schemaSummary(p.schema))}</td><td>${inlineCode(p.description ?? p.schema?.description ?? '')}</td></tr>`)
    .join('');
  const bodyRef = op.requestBody?.content?.['application/json']?.schema as Json | undefined;
  // Shared shapes are $refs into components.schemas.
  const body = typeof bodyRef?.$ref === 'string' ? (schemas[bodyRef.$ref.split('/').pop()!] as Json | undefined) : bodyRef;
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => `<li><b>${escape(status)}</b> ${inlineCode((r as Json).description ?? '')}</li>`)
    .join('');
  return `<section id="${escape(op.operationId)}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>/api/v1${escape(path)}</code> — ${escape(op.summary)}</h3>
<p>${inlineCode(op.description ?? '').replace(/\n\n/g, '</p><p>')}</p>
${paramRows ? `<h4>Parameters</h4><table><tr><th>Name</th><th>Type</th><th>Notes</th></tr>${paramRows}</table>` : ''}
${body ? `<h4>Request body (JSON)</h4>${fieldsTable(body)}` : ''}
<h4>Responses</h4><ul>${responses}</ul></section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:0 auto;padding:1rem 2rem;color:#1c2230}
code{background:#f1f3f7;padding:0 .25em;border-radius:3px}table{border-collapse:collapse;margin:.5rem 0;width:100%}
td,th{border:1px solid #dde1ea;padding:.25rem .5rem;text-align:left;vertical-align:top}section{border-top:1px solid #dde1ea;padding-top:.5rem}
.m{font-size:.8em;padding:.1em .4em;border-radius:3px;color:#fff}.get{background:#2f6fdf}.post{background:#1f9d55}.patch{background:#c27c0e}nav a{margin-right:1em}`;

/** A readable API reference at /docs, rendered from the served OpenAPI document; /docs/errors lists the problem types. */
export function registerDocs(app: FastifyInstance): void {
  let cached: string | undefined;
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) => {
    if (!cached) {
      const doc = app.swagger() as Json;
      const sections = Object.entries(doc.paths as Json)
        .flatMap(([path, methods]) => Object.entries(methods as Json).map(([method, op]) => operationHtml(method, path, op as Json, doc.components?.schemas ?? {})))
        .join('\n');
      const toc = Object.entries(doc.paths as Json)
        .flatMap(([path, methods]) => Object.entries(methods as Json).map(([method, op]) => `<li><a href="#${escape((op as Json).operationId)}">${method.toUpperCase()} ${escape(path)}</a> — ${escape((op as Json).summary)}</li>`))
        .join('');
      cached = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)} — reference</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head><body>
<h1>${escape(doc.info.title)} <small>v${escape(doc.info.version)}</small></h1>
<nav><a href="/api/v1/openapi">OpenAPI document (JSON)</a><a href="/docs/errors">Error codes</a></nav>
<p>${inlineCode(doc.info.description).replace(/\n\n/g, '</p><p>').replace(/\n/g, ' ')}</p><h2>Operations</h2><ul>${toc}</ul>${sections}</body></html>`;
    }
    return reply.type('text/html; charset=utf-8').send(cached);
  });
  app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) => {
    const rows = Object.entries(ERROR_CODES)
      .map(([code, e]) => `<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td><td>${escape(e.title)}</td><td><code>${escape(problemType(code as keyof typeof ERROR_CODES))}</code></td></tr>`)
      .join('');
    return reply
      .type('text/html; charset=utf-8')
      .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error codes</title><style>${STYLE}</style></head><body><h1>Error codes</h1>
<p>Every error is an RFC 9457 problem (<code>application/problem+json</code>) with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, a stable <code>code</code> and the <code>request_id</code>.</p>
<table><tr><th>code</th><th>status</th><th>title</th><th>type</th></tr>${rows}</table><p><a href="/docs">← API reference</a></p></body></html>`);
  });
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** How the server answers the next requests. */
export type Behaviour =
  /** A normal answer in these pieces: streamed as SSE when the request asks for `stream`, else one JSON body. */
  | { kind: 'answer'; chunks: string[] }
  /** An HTTP error with an OpenAI-style error body. */
  | { kind: 'status'; status: number; message?: string; headers?: Record<string, string> }
  /** Accepts the request and never answers. */
  | { kind: 'hang' }
  /** Streams these pieces, then cuts the connection before the end of the stream. */
  | { kind: 'drop'; chunks: string[] }
  /** A normal answer computed from the request (a stand-in model), in the pieces `reply` returns. */
  | { kind: 'respond'; reply: (request: RecordedRequest) => string[] };

/** Turns one input text into its embedding. */
export type EmbedFunction = (text: string) => number[];

/** A local server that speaks the OpenAI chat completions and embeddings wire formats, for the provider tests. */
export interface OpenAiTestServer {
  /** The base URL to configure as OPENAI_BASE_URL (ends in /v1). */
  baseUrl: string;
  requests: RecordedRequest[];
  behave(behaviour: Behaviour): void;
  /** Answers POST /v1/embeddings with this status (an OpenAI-style error) until given null. */
  failEmbeddings(status: number | null): void;
  close(): Promise<void>;
}

/**
 * A deterministic embedding for wiring tests: each word hashed into one of 64 dimensions (the hashing
 * trick), so texts that share words are near and others are not. The evaluation uses real word vectors.
 */
export function hashedEmbedding(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    let hash = 2166136261;
    for (const char of word) hash = Math.imul(hash ^ char.codePointAt(0)!, 16777619) >>> 0;
    vector[hash % 64]! += hash & 64 ? 1 : -1;
  }
  return vector;
}

function embeddings(request: RecordedRequest, response: http.ServerResponse, embed: EmbedFunction): void {
  const input = request.body.input;
  const texts = Array.isArray(input) ? input.map(String) : [String(input)];
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify({
    object: 'list',
    data: texts.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) })),
    model: String(request.body.model ?? 'unknown'),
    usage: { prompt_tokens: texts.length, total_tokens: texts.length },
  }));
}

function chunkEvent(model: string, delta: Record<string, unknown>, finishReason: string | null): string {
  const chunk = {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function streamHead(response: http.ServerResponse, model: string): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.write(chunkEvent(model, { role: 'assistant', content: '' }, null));
}

function answer(request: RecordedRequest, response: http.ServerResponse, chunks: string[]): void {
  const model = String(request.body.model ?? 'unknown');
  if (request.body.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: chunks.join('') }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: chunks.length, total_tokens: 10 + chunks.length },
    }));
    return;
  }
  streamHead(response, model);
  for (const chunk of chunks) response.write(chunkEvent(model, { content: chunk }, null));
  response.write(chunkEvent(model, {}, 'stop'));
  response.end('data: [DONE]\n\n');
}

/** Starts the server on a free port of 127.0.0.1; it answers every request with `behaviour` until told otherwise. */
export async function startOpenAiServer(
  behaviour: Behaviour = { kind: 'answer', chunks: ['Hello', ' there', '!'] },
  options: { embed?: EmbedFunction; /** Model ids listed at GET /v1/models (without: 404, as some servers answer). */ models?: string[] } = {},
): Promise<OpenAiTestServer> {
  let current = behaviour;
  let embeddingStatus: number | null = null;
  const embed = options.embed ?? hashedEmbedding;
  const requests: RecordedRequest[] = [];
  const server = http.createServer((incoming, response) => {
    let raw = '';
    incoming.setEncoding('utf8');
    incoming.on('data', (chunk: string) => (raw += chunk));
    incoming.on('end', () => {
      const recorded: RecordedRequest = { method: incoming.method ?? '', path: incoming.url ?? '', headers: incoming.headers, body: raw ? JSON.parse(raw) : {} };
      requests.push(recorded);
      if (recorded.path === '/v1/embeddings' && recorded.method === 'POST') {
        if (embeddingStatus === null) embeddings(recorded, response, embed);
        else response.writeHead(embeddingStatus, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'embeddings unavailable', type: 'server_error', code: null } }));
        return;
      }
      if (recorded.path === '/v1/models' && recorded.method === 'GET' && options.models) {
        const data = options.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'test' }));
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
        return;
      }
      if (recorded.path !== '/v1/chat/completions' || recorded.method !== 'POST') {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const now = current;
      if (now.kind === 'answer') answer(recorded, response, now.chunks);
      else if (now.kind === 'respond') answer(recorded, response, now.reply(recorded));
      else if (now.kind === 'status') {
        response.writeHead(now.status, { 'content-type': 'application/json', ...now.headers });
        response.end(JSON.stringify({ error: { message: now.message ?? 'The server had an error', type: 'server_error', code: null } }));
      } else if (now.kind === 'drop') {
        const model = String(recorded.body.model);
        streamHead(response, model);
        const events = now.chunks.map((chunk) => chunkEvent(model, { content: chunk }, null)).join('');
        // Cut once the pieces have reached the socket, so the client sees them and then the cut.
        response.write(events, () => response.socket?.destroy());
      }
      // 'hang': never answer; close() cuts the connection.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    behave: (next) => (current = next),
    failEmbeddings: (status) => (embeddingStatus = status),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedRequest } from './openai-server.js';

/** How the server answers: a streamed answer in these pieces, or an HTTP error with Anthropic's error body. */
export type AnthropicBehaviour = { kind: 'answer'; chunks: string[] } | { kind: 'status'; status: number; type: string; message: string };

/** A local server that speaks Anthropic's Messages API with streaming (server-sent events), for the provider tests. */
export interface AnthropicTestServer {
  /** The base URL to configure as ANTHROPIC_BASE_URL (ends in /v1). */
  baseUrl: string;
  requests: RecordedRequest[];
  behave(behaviour: AnthropicBehaviour): void;
  close(): Promise<void>;
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function stream(response: http.ServerResponse, model: string, chunks: string[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const usage = { input_tokens: 25, output_tokens: 1 };
  const message = { id: 'msg_test', type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage };
  response.write(event('message_start', { message }));
  response.write(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
  response.write(event('ping', {}));
  for (const text of chunks) response.write(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }));
  response.write(event('content_block_stop', { index: 0 }));
  response.write(event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: chunks.length } }));
  response.end(event('message_stop', {}));
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startAnthropicServer(behaviour: AnthropicBehaviour = { kind: 'answer', chunks: ['Hello', '!'] }): Promise<AnthropicTestServer> {
  let current = behaviour;
  const requests: RecordedRequest[] = [];
  const server = http.createServer((incoming, response) => {
    let raw = '';
    incoming.setEncoding('utf8');
    incoming.on('data', (chunk: string) => (raw += chunk));
    incoming.on('end', () => {
      const recorded: RecordedRequest = { method: incoming.method ?? '', path: incoming.url ?? '', headers: incoming.headers, body: raw ? JSON.parse(raw) : {} };
      requests.push(recorded);
      const now = current;
      if (recorded.path !== '/v1/messages' || recorded.method !== 'POST') {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not found' } }));
      } else if (now.kind === 'status') {
        response.writeHead(now.status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: now.type, message: now.message } }));
      } else {
        stream(response, String(recorded.body.model), now.chunks);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    behave: (next) => (current = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

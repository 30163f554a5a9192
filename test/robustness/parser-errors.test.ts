import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorHandler } from '../../src/http/client-errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';

// Requests that Node's HTTP parser refuses never reach a route: the service still answers them as RFC 9457
// problems (application/problem+json with a code and a request id), written straight to the socket.

interface RawResponse {
  statusCode: number;
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes on a fresh connection and reads what comes back until the server closes it. */
function exchange(port: number, request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks).toString('utf8'))));
    socket.write(request);
  });
}

function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = raw.slice(0, end < 0 ? raw.length : end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { statusCode: Number(statusLine.split(' ')[1]), statusLine, headers, body: end < 0 ? '' : raw.slice(end + 4) };
}

describe('errors raised by the HTTP parser', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  function expectRawProblem(response: RawResponse, status: number, code: string) {
    const problem = expectProblem(response, status, code);
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
    expect(response.headers.connection).toBe('close');
    expect(problem.type).toBe(`/docs/errors#${code}`);
    return problem;
  }

  it.each([
    ['a Content-Length that is not a number', 'POST /api/v1/leads HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}', /Content-Length/],
    ['two different Content-Length values', 'POST /api/v1/leads HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', /Content-Length/],
    ['Content-Length beside Transfer-Encoding: chunked', 'POST /api/v1/leads HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /Content-Length/],
    ['a header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nThisLineHasNoColon\r\n\r\n', /header/i],
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n', /HTTP/],
  ])('%s: 400 invalid_request as a problem', async (_label, request, detail) => {
    const problem = expectRawProblem(await exchange(port, request), 400, 'invalid_request');
    expect(problem.detail).toMatch(detail);
  });

  it('headers larger than the server accepts: 431 request_header_fields_too_large as a problem', async () => {
    const response = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(response.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expectRawProblem(response, 431, 'request_header_fields_too_large');
  });

  it('the codes are in the catalogue that /docs/errors and the OpenAPI document list', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/errors' });
    expect(page.body).toContain('<tr id="request_header_fields_too_large">');
    expect(page.body).toContain('<tr id="request_timeout">');
    // The Problem schema's `code` lists every code of the catalogue.
    const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi' })).body;
    expect(document).toContain('`request_header_fields_too_large`');
    expect(document).toContain('`request_timeout`');
  });

  it('a request that times out gets 408 request_timeout as a problem', async () => {
    // Node raises ERR_HTTP_REQUEST_TIMEOUT from its periodic connection check (every 30 s); the handler is
    // driven with that error on a real connection rather than waiting for it.
    const server = net.createServer((socket) => {
      const error = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
      clientErrorHandler.call(t.app, error, socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await exchange((server.address() as net.AddressInfo).port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
      expectRawProblem(response, 408, 'request_timeout');
    } finally {
      server.close();
    }
  });

  it('a reset connection gets nothing written, and the server goes on answering', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /healthz HTTP/1.1\r\nHost: local');
    socket.resetAndDestroy();
    const response = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(response.statusCode).toBe(200);
  });
});

import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';

// A request that arrives while the service shuts down (on a connection that was already open) is answered
// 503 as a problem, with Retry-After and Connection: close, like every other refusal of the service.

describe('a request during shutdown', () => {
  it('gets 503 service_unavailable as problem details', async () => {
    const t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    // Half a request: the connection is busy, so closing the server waits for it.
    socket.write('GET /api/v1/chatbots HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = t.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write('\r\n');
    await ended;
    await closing;

    const raw = Buffer.concat(chunks).toString('utf8');
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
    expect(head.toLowerCase()).toContain('content-type: application/problem+json');
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toMatch(/retry-after: \d+/);
    const problem = JSON.parse(body) as { status: number; code: string; detail: string };
    expect(problem).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(problem.detail).toMatch(/shutting down/);
  });
});

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { newId } from '../lib/ids.js';
import { AppError, problemType } from './errors.js';

// What Node's HTTP parser (llhttp) refuses, in the words of the API's error catalogue.
const PARSER_DETAILS: Record<string, string> = {
  HPE_INVALID_CONTENT_LENGTH: 'The Content-Length header is not a single whole number of bytes.',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding: chunked cannot be sent together.',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end with chunked and cannot be sent beside Content-Length.',
  HPE_INVALID_HEADER_TOKEN: 'A header line is malformed: it needs a name, a colon and a value, in allowed characters.',
  HPE_INVALID_METHOD: 'The request line is not HTTP: it must be METHOD /path HTTP/1.1.',
  HPE_INVALID_URL: 'The request target is not a valid URL path.',
  HPE_INVALID_VERSION: 'The request line is not HTTP: the version must be HTTP/1.0 or HTTP/1.1.',
  HPE_INVALID_CHUNK_SIZE: 'A chunk size of the chunked body is malformed.',
  HPE_CR_EXPECTED: 'A line of the request does not end with CRLF.',
  HPE_LF_EXPECTED: 'A line of the request does not end with CRLF.',
};

/** The problem for an error Node's HTTP server raised before there was a request to answer. */
function problemFor(error: NodeJS.ErrnoException): AppError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new AppError('request_header_fields_too_large', 'The request line and headers are larger than the server accepts (16 KiB).');
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new AppError('request_timeout', 'The request was not received in full in time.');
  }
  const detail = (error.code && PARSER_DETAILS[error.code]) ?? 'The request is not well-formed HTTP/1.1.';
  return new AppError('invalid_request', detail);
}

/**
 * Fastify `clientErrorHandler` (Node's 'clientError'): a request the HTTP parser refused (bad Content-Length, a
 * header line without a colon, headers over the size limit, a timeout) has no request or reply object, so the
 * problem is written to the socket as a raw HTTP/1.1 response, which then closes. Nothing is written on a
 * connection that is gone or that is midway through sending another response.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const problem = problemFor(error);
  const requestId = newId('request');
  const body = JSON.stringify({ type: problemType(problem.code), title: problem.title, status: problem.status, detail: problem.message, code: problem.code, request_id: requestId });
  this.log.debug({ code: error.code, status: problem.status, request_id: requestId }, 'client error');
  const head =
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
    `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n`;
  // Closed once written, whatever the client still sends: the parser is gone, nothing more is read.
  socket.end(head + body, () => socket.destroy());
}

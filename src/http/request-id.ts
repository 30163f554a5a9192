import type { IncomingMessage } from 'node:http';
import { newId } from '../lib/ids.js';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify `genReqId`: the client's `Request-Id` when well-formed, else a new `req_…` id. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers['request-id'];
  return typeof given === 'string' && ACCEPTABLE.test(given) ? given : newId('request');
}

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { describeKind, nonPublicKind } from './outbound-addresses.js';

/** The limits of every request the service makes to a URL a user gave it (website sources). */
export interface OutboundPolicy {
  /** Allow private, loopback and link-local addresses (tests, intranet deployments). */
  allowPrivateHosts: boolean;
  /** The whole request: DNS, connection, every redirect and the body. */
  timeoutMs: number;
  /** The body after decompression. */
  maxResponseBytes: number;
  maxRedirects: number;
  userAgent: string;
  /**
   * Hosts (`name` or `name:port`, as in the URL) exempt from the address check. Meant for tests that serve a
   * site on 127.0.0.1 and must still see every other private address refused; empty in production.
   */
  allowedHosts?: string[];
  /** false: a 3xx is returned as the response, not followed (webhook deliveries). Default true. */
  followRedirects?: boolean;
  /** true: a body past `maxResponseBytes` is cut there instead of failing the fetch (webhooks keep an excerpt). */
  truncateBody?: boolean;
  /** The resolver (node:dns `lookup` by default); tests give one that answers for names that exist nowhere. */
  lookup?: Resolver;
  /** Requests and time shared by a series of fetches (one crawl); each request, each redirect hop, takes one. */
  budget?: FetchBudget;
  /** true: the body of an answer outside 2xx is not read (cancelled, `body` empty); for callers that judge by the status. */
  skipErrorBodies?: boolean;
}

/** A name resolver with the shape of node:dns `lookup` called with `{ all: true }`. */
export type Resolver = (hostname: string, options: { all: true; verbatim: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** A request other than a bare GET: the method and its body (sent with its content type in the headers). */
export interface OutboundRequest {
  method: 'POST';
  body: string;
}

/** A fetch that failed or was refused; the message is readable by the user ("refused: 10.0.0.5 is a private address"). */
export class OutboundError extends Error {
  override name = 'OutboundError';
}

/** A fetch not started, or cut short, because its series' budget (requests or time) is spent. */
export class FetchBudgetSpent extends OutboundError {
  override name = 'FetchBudgetSpent';
}

/**
 * How many requests a series of fetches (one crawl) may send and until when: every request counts, redirect
 * hops, refusals and failures included, so a site answering with redirects or errors cannot multiply them.
 */
export class FetchBudget {
  private sent = 0;
  private endsAt: number;

  /** `maxMs` from now (monotonic clock); Infinity: no time limit. */
  constructor(readonly maxRequests: number, readonly maxMs = Infinity) {
    this.endsAt = performance.now() + maxMs;
  }

  /** Requests taken so far. */
  get requests(): number {
    return this.sent;
  }

  get requestsLeft(): number {
    return Math.max(0, this.maxRequests - this.sent);
  }

  get msLeft(): number {
    return Math.max(0, this.endsAt - performance.now());
  }

  /** Ends the time now: a fetch was cut at the budget's end (its timer may fire a moment before the clock says so). */
  end(): void {
    this.endsAt = Math.min(this.endsAt, performance.now());
  }

  /** What is spent, if anything: no request may start any more. */
  get spent(): 'time' | 'requests' | null {
    if (this.msLeft <= 0) return 'time';
    return this.requestsLeft <= 0 ? 'requests' : null;
  }

  /** Takes one request, or throws FetchBudgetSpent. */
  take(): void {
    const spent = this.spent;
    if (spent === 'time') throw new FetchBudgetSpent('the time limit is reached');
    if (spent === 'requests') throw new FetchBudgetSpent(`the limit of ${this.maxRequests} requests is reached`);
    this.sent++;
  }
}

/** What a successful exchange returned (any status; the caller decides what a 404 means). */
export interface OutboundResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType: string | null;
  /** The response headers (e.g. Retry-After). */
  headers: http.IncomingHttpHeaders;
  body: Uint8Array;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CROSS_ORIGIN_DROPPED = ['authorization', 'cookie', 'proxy-authorization'];

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (mb >= 1) return `${Number(mb.toFixed(1))} MB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KB`;
  return `${bytes} bytes`;
}

/**
 * A shared deadline for one fetch: its signal aborts the socket; timedOut() tells why an error happened. A
 * budget whose time ends first cuts the fetch there, and the error says the budget is spent.
 */
function startDeadline(timeoutMs: number, budget?: FetchBudget) {
  const controller = new AbortController();
  const budgetMs = budget?.msLeft ?? Infinity;
  const cutByBudget = budgetMs < timeoutMs;
  const timer = setTimeout(() => {
    if (cutByBudget) budget?.end();
    controller.abort();
  }, Math.min(timeoutMs, budgetMs));
  const message = `no answer within ${Number((timeoutMs / 1000).toFixed(1))} s`;
  return {
    signal: controller.signal,
    timedOut: () => controller.signal.aborted,
    error: () => (cutByBudget ? new FetchBudgetSpent('the time limit is reached') : new OutboundError(message)),
    clear: () => clearTimeout(timer),
  };
}
type Deadline = ReturnType<typeof startDeadline>;

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('refused: not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError(`refused: only http and https URLs are fetched (${url.protocol})`);
  }
  return url;
}

function resolve(hostname: string, deadline: Deadline, lookup: Resolver = dnsLookup): Promise<LookupAddress[]> {
  return new Promise((done, fail) => {
    const onAbort = () => fail(deadline.error());
    deadline.signal.addEventListener('abort', onAbort, { once: true });
    lookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      deadline.signal.removeEventListener('abort', onAbort);
      if (error) fail(new OutboundError(`${hostname} could not be resolved (${error.code ?? error.message})`));
      else done(addresses);
    });
  });
}

/**
 * The addresses to connect to for this URL, each one checked. The request connects only to these (its lookup
 * returns them), so a DNS answer that changes between the check and the connection cannot reach a private host.
 */
async function checkedAddresses(url: URL, policy: OutboundPolicy, deadline: Deadline): Promise<LookupAddress[]> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const exempt = (policy.allowedHosts ?? []).some((entry) => entry.toLowerCase() === url.host || entry.toLowerCase() === url.hostname);
  const literalFamily = isIP(hostname);
  const addresses = literalFamily ? [{ address: hostname, family: literalFamily }] : await resolve(hostname, deadline, policy.lookup);
  if (policy.allowPrivateHosts || exempt) return addresses;
  for (const { address } of addresses) {
    const kind = nonPublicKind(address);
    if (kind === null) continue;
    throw new OutboundError(literalFamily ? `refused: ${hostname} is ${describeKind(kind)}` : `refused: ${hostname} resolves to ${address}, ${describeKind(kind)}`);
  }
  return addresses;
}

function connectionError(error: NodeJS.ErrnoException, url: URL): OutboundError {
  if (error instanceof OutboundError) return error;
  if (error.code === 'ECONNREFUSED') return new OutboundError(`${url.host} refused the connection`);
  if (error.code === 'ECONNRESET') return new OutboundError(`${url.host} closed the connection`);
  if (error.code?.startsWith('Z_')) return new OutboundError(`the response could not be decompressed (${error.message})`);
  if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT')) return new OutboundError(`TLS error with ${url.host}: ${error.message}`);
  return new OutboundError(`could not fetch ${url.host}: ${error.code ?? error.message}`);
}

function decoded(response: http.IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip()
    : encoding === 'deflate' ? zlib.createInflate()
    : encoding === 'br' ? zlib.createBrotliDecompress()
    : null;
  return decoder ? pipeline(response, decoder, () => {}) : response;
}

/** Reads the (decompressed) body, stopping as soon as it passes the cap. */
async function readCapped(response: http.IncomingMessage, maxBytes: number, truncate = false): Promise<Uint8Array> {
  const tooLarge = () => new OutboundError(`the response is larger than ${formatBytes(maxBytes)}`);
  const declared = Number(response.headers['content-length']);
  if (!truncate && !response.headers['content-encoding'] && Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const body = decoded(response);
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      if (truncate) {
        chunks.push(chunk.subarray(0, chunk.byteLength - (total - maxBytes)));
        body.destroy();
        response.destroy();
        break;
      }
      body.destroy();
      response.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  const joined = Buffer.concat(chunks);
  return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}

function send(url: URL, addresses: LookupAddress[], headers: Record<string, string>, deadline: Deadline, outbound?: OutboundRequest): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((done, fail) => {
    const request = client.request(url, {
      method: outbound?.method ?? 'GET',
      headers: outbound ? { ...headers, 'content-length': String(Buffer.byteLength(outbound.body)) } : headers,
      signal: deadline.signal,
      agent: false, // a fresh connection to the checked address; no pooled socket from an earlier resolution
      lookup: ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options?.all) callback(null, addresses);
        else callback(null, addresses[0]?.address, addresses[0]?.family);
      }) as never,
    });
    request.once('response', done);
    request.on('error', fail); // kept: an abort after the response must not become an unhandled 'error'
    request.end(outbound?.body);
  });
}

/**
 * GET with the policy: http(s) only; resolves DNS itself and refuses private/loopback/link-local/unspecified
 * addresses (v4+v6, incl. v4-mapped) unless allowed, connecting to the checked address (no re-resolve race);
 * follows redirects by hand, checking each; caps body bytes and total time; takes each request (each hop)
 * from the policy's budget, if any.
 */
export async function safeFetch(rawUrl: string, policy: OutboundPolicy, headers: Record<string, string> = {}, outbound?: OutboundRequest): Promise<OutboundResponse> {
  const deadline = startDeadline(policy.timeoutMs, policy.budget);
  let requestHeaders: Record<string, string> = { accept: '*/*', 'accept-encoding': 'gzip, deflate, br' };
  for (const [name, value] of Object.entries(headers)) requestHeaders[name.toLowerCase()] = value;
  requestHeaders['user-agent'] = policy.userAgent;
  let url = parseTarget(rawUrl);
  try {
    for (let redirects = 0; ; redirects++) {
      policy.budget?.take();
      const addresses = await checkedAddresses(url, policy, deadline);
      let response: http.IncomingMessage;
      try {
        response = await send(url, addresses, requestHeaders, deadline, outbound);
      } catch (error) {
        throw deadline.timedOut() ? deadline.error() : connectionError(error as NodeJS.ErrnoException, url);
      }
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location && policy.followRedirects !== false) {
        response.destroy();
        if (redirects >= policy.maxRedirects) throw new OutboundError(`more than ${policy.maxRedirects} redirects`);
        let next: URL;
        try {
          next = parseTarget(new URL(location, url).href);
        } catch (error) {
          throw error instanceof OutboundError ? error : new OutboundError('refused: not a valid redirect');
        }
        if (next.origin !== url.origin) {
          requestHeaders = Object.fromEntries(Object.entries(requestHeaders).filter(([name]) => !CROSS_ORIGIN_DROPPED.includes(name)));
        }
        url = next;
        continue;
      }
      if (policy.skipErrorBodies && (status < 200 || status > 299)) {
        response.destroy();
        return { url: url.href, status, contentType: response.headers['content-type'] ?? null, headers: response.headers, body: new Uint8Array() };
      }
      try {
        const body = await readCapped(response, policy.maxResponseBytes, policy.truncateBody);
        return { url: url.href, status, contentType: response.headers['content-type'] ?? null, headers: response.headers, body };
      } catch (error) {
        if (error instanceof OutboundError) throw error;
        throw deadline.timedOut() ? deadline.error() : connectionError(error as NodeJS.ErrnoException, url);
      }
    }
  } finally {
    deadline.clear();
  }
}

/**
 * Why a fetch of this URL would be refused before connecting (not http(s), or a non-public address unless
 * allowed), or null. A name that does not resolve is not a refusal: it may resolve later, and the fetch
 * checks again then.
 */
export async function addressRefusal(rawUrl: string, policy: Pick<OutboundPolicy, 'allowPrivateHosts' | 'allowedHosts' | 'timeoutMs'>): Promise<string | null> {
  const deadline = startDeadline(policy.timeoutMs);
  try {
    await checkedAddresses(parseTarget(rawUrl), { ...policy, maxResponseBytes: 0, maxRedirects: 0, userAgent: '' }, deadline);
    return null;
  } catch (error) {
    return error instanceof OutboundError && error.message.startsWith('refused') ? error.message : null;
  } finally {
    deadline.clear();
  }
}

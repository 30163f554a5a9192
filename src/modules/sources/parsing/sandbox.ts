import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { PageLinks } from './links.js';
import type { ParseRequest, ParseResponse } from './parse-process.js';
import { DocumentError, type FileKind, type ParsedDocument } from './types.js';

/**
 * The parse sandbox: every untrusted file or crawled page is parsed in a child process of its own, never
 * on the server's thread. A child has a heap limit, its resident memory is watched, and each parse has a
 * deadline; a parse past either is killed with its child, fails its document (`too_large_when_expanded`,
 * `took_too_long`), and the server goes on serving. Child processes rather than worker threads: a worker's
 * ArrayBuffers live outside its heap limit and in the server's own memory (a PDF stream inflating to 3 GB
 * took a worker with a 256 MB heap limit to 6.4 GB of resident memory), and a killed process gives all its
 * memory back (docs/decisions/0029-parse-sandbox.md).
 */
export interface ParseSandbox {
  /** Parses one document in a child; throws DocumentError (with its code) when it cannot be read. */
  parse(bytes: Uint8Array, kind: FileKind): Promise<ParsedDocument>;
  /** Reads a crawled HTML page's links and canonical URL in a child (the crawler's LinkReader); throws DocumentError. */
  links(bytes: Uint8Array, contentType: string | null, url: string): Promise<PageLinks>;
  /** Kills every child (the server is stopping); parses in flight fail. */
  close(): Promise<void>;
}

export interface ParseSandboxOptions {
  /** Resident memory a child may reach, heap included, in MB (SOURCE_PARSE_MEMORY_MB). */
  memoryMb: number;
  /** Longest one parse may take (SOURCE_PARSE_TIMEOUT_MS). */
  timeoutMs: number;
  /** Most bytes an archive may expand to (SOURCE_MAX_EXPANDED_MB). */
  maxExpandedBytes: number;
  /** Children at most at once (parses beyond wait their turn). */
  size: number;
  /** Text kept per document (the parser's own default when unset). */
  maxTextChars?: number;
}

/** How often a running child's resident memory is read. */
const WATCH_INTERVAL_MS = 50;
/** An idle child is ended after this long (it is started again, in about 0.2 s, when needed). */
const IDLE_MS = 10_000;
/** Memory besides the heap that a child needs (code, young generation, buffers of a normal parse). */
const NON_HEAP_MB = 96;
/** Parsing is background work: on a busy machine the server's requests come first (a nice value; 19 is the lowest priority). */
const CHILD_NICE = 10;

interface Child { process: ChildProcess; idle: NodeJS.Timeout | null; exited: boolean }

/** The child's script: the built .js beside this file, or the .ts source through tsx (tests, `npm run dev`). */
function childScript(): { path: string; execArgv: string[] } {
  const own = fileURLToPath(import.meta.url);
  if (own.endsWith('.ts')) return { path: own.replace(/sandbox\.ts$/, 'parse-process.ts'), execArgv: ['--import', 'tsx'] };
  return { path: own.replace(/sandbox\.js$/, 'parse-process.js'), execArgv: [] };
}

/** A process's resident memory in bytes (Linux's /proc); null where it cannot be read. */
function residentBytes(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

export function createParseSandbox(options: ParseSandboxOptions): ParseSandbox {
  const script = childScript();
  const limitBytes = options.memoryMb * 1024 * 1024;
  const idle: Child[] = [];
  const all = new Set<Child>();
  // Parses waiting for a slot; a finishing parse hands its slot to the first of them.
  const waiting: (() => void)[] = [];
  let busy = 0;
  let closed = false;
  let nextId = 0;

  function spawnChild(): Child {
    const heapMb = Math.max(32, options.memoryMb - NON_HEAP_MB);
    const process = fork(script.path, [], {
      execArgv: [...script.execArgv, `--max-old-space-size=${heapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const child: Child = { process, idle: null, exited: false };
    try {
      if (process.pid !== undefined) os.setPriority(process.pid, CHILD_NICE);
    } catch {
      // Not permitted here (some containers): the child runs at the server's priority.
    }
    all.add(child);
    process.once('exit', () => {
      child.exited = true;
      all.delete(child);
      const at = idle.indexOf(child);
      if (at >= 0) idle.splice(at, 1);
      if (child.idle) clearTimeout(child.idle);
    });
    // A failed send or a channel closed by the child's death surfaces as 'exit'; this keeps it from throwing.
    process.on('error', () => undefined);
    return child;
  }

  async function acquire(): Promise<Child> {
    if (busy >= options.size) await new Promise<void>((resolve) => waiting.push(resolve));
    else busy++;
    for (let child = idle.pop(); child; child = idle.pop()) {
      if (child.idle) clearTimeout(child.idle);
      child.idle = null;
      if (!child.exited) return child;
    }
    return spawnChild();
  }

  function release(child: Child, reuse: boolean): void {
    const next = waiting.shift();
    if (next) next();
    else busy--;
    if (!reuse || closed || child.exited) {
      if (!child.exited) child.process.kill('SIGKILL');
      return;
    }
    child.idle = setTimeout(() => child.process.kill('SIGKILL'), IDLE_MS);
    child.idle.unref();
    idle.push(child);
  }

  type Task = { task: 'document'; bytes: Uint8Array; kind: FileKind } | { task: 'links'; bytes: Uint8Array; contentType: string | null; url: string };

  async function run(task: Task): Promise<ParsedDocument | PageLinks> {
    if (closed) throw new Error('the parse sandbox was closed: the server is stopping');
    const child = await acquire();
    const id = ++nextId;
    return new Promise<ParsedDocument | PageLinks>((resolve, reject) => {
      let killedFor: DocumentError | null = null;
      const kill = (reason: DocumentError) => {
        killedFor ??= reason;
        child.process.kill('SIGKILL');
      };
      const deadline = setTimeout(() => kill(tookTooLong(options.timeoutMs)), options.timeoutMs);
      const watch = setInterval(() => {
        const resident = child.process.pid === undefined ? null : residentBytes(child.process.pid);
        if (resident !== null && resident > limitBytes) kill(tooLarge(options.memoryMb));
      }, WATCH_INTERVAL_MS);
      const done = (reuse: boolean) => {
        clearTimeout(deadline);
        clearInterval(watch);
        child.process.off('message', onMessage);
        child.process.off('exit', onExit);
        release(child, reuse);
      };
      const onMessage = (response: ParseResponse) => {
        if (response.id !== id) return;
        // A child that grew past half its allowance is not kept: its heap would stay that large.
        const resident = child.process.pid === undefined ? null : residentBytes(child.process.pid);
        done(resident === null || resident < limitBytes / 2);
        if (response.ok) resolve(response.result);
        else reject(new DocumentError(response.message, response.code));
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        done(false);
        if (killedFor) return reject(killedFor);
        if (closed) return reject(new Error('the parse sandbox was closed: the server is stopping'));
        // V8 aborts a process whose heap reached its limit.
        if (signal === 'SIGABRT' || code === 134) return reject(tooLarge(options.memoryMb));
        reject(new DocumentError(`The document could not be read: its parser stopped (${signal ?? `exit code ${code}`}).`));
      };
      child.process.on('message', onMessage);
      child.process.once('exit', onExit);
      const request: ParseRequest = task.task === 'links'
        ? { id, ...task }
        : { id, ...task, options: { maxExpandedBytes: options.maxExpandedBytes, maxTextChars: options.maxTextChars } };
      child.process.send(request, (error) => {
        if (error) kill(new DocumentError('The document could not be read: its parser could not be started.'));
      });
    });
  }

  return {
    parse: async (bytes, kind) => (await run({ task: 'document', bytes, kind })) as ParsedDocument,
    links: async (bytes, contentType, url) => (await run({ task: 'links', bytes, contentType, url })) as PageLinks,
    async close() {
      closed = true;
      const exits = [...all].map((child) => new Promise<void>((resolve) => {
        if (child.exited) return resolve();
        child.process.once('exit', () => resolve());
        child.process.kill('SIGKILL');
      }));
      await Promise.all(exits);
    },
  };
}

function tooLarge(memoryMb: number): DocumentError {
  return new DocumentError(
    `The document needs more than ${memoryMb} MB of memory to read (SOURCE_PARSE_MEMORY_MB): it expands too much when unpacked or parsed.`,
    'too_large_when_expanded',
  );
}

function tookTooLong(timeoutMs: number): DocumentError {
  return new DocumentError(`Reading the document took longer than ${timeoutMs / 1000} s (SOURCE_PARSE_TIMEOUT_MS).`, 'took_too_long');
}

import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { agentTalks } from '../chatbots/availability.js';
import { chatbotRepository } from '../chatbots/repository.js';
import { conversationRepository, type ConversationRow } from '../conversations/repository.js';
import { messageRepository, type MessageRow } from '../messages/repository.js';
import { presentMessage } from '../messages/presenter.js';
import type { MessageService, ReplyRequester } from '../messages/service.js';
import type { MessageView } from '../messages/schema.js';
import type { ReplyEngine, ReplyOutput } from '../replies/engine.js';
import type { ClaimableQueue } from './queues.js';
import { replyJobRepository, runtimeRepository, type JobKind, type JobRow, type ReplyJobRow } from './repository.js';

/** Messages of the transcript handed to the engine. */
const TRANSCRIPT_LENGTH = 20;
/**
 * Claims of a job before it is given up, whether its runs threw or died with their process (the engine
 * already answers provider failures with a fallback). A sync that takes its process down is given up sooner.
 */
const MAX_ATTEMPTS: Record<JobKind, number> = { reply: 5, ingest: 3 };
/** The reason recorded on a job given up because its runner died holding it, run after run. */
const CRASHED_REPEATEDLY = 'crashed_repeatedly';

/** What running a job gave: the stored answer, or null when none was due (human mode, closed, gone). */
export type JobOutcome = { status: 'answered'; reply: MessageView } | { status: 'silent' } | { status: 'failed'; error: string };

/** Minimal logger the worker needs (pino's). */
export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** What the worker is built from. */
export interface ReplyWorkerDeps {
  db: Kysely<Database>;
  clock: Clock;
  engine: ReplyEngine;
  messages: MessageService;
  log: WorkerLog;
  leaseMs: number;
  pollIntervalMs: number;
  /** Jobs the poller runs at once in this process (REPLY_CONCURRENCY); answers given inline by requests are not counted. */
  concurrency: number;
  /** Ingestion of knowledge sources, run from the same queue in slots of its own (so it never starves replies). */
  ingest?: { runner: IngestRunner; concurrency: number };
  /** Queues with rows of their own (webhook deliveries), each polled in slots of its own. */
  queues?: readonly ClaimableQueue[];
}

/** Runs ingest jobs (src/modules/sources/ingestion.ts); the worker holds the lease and records the outcome. */
export interface IngestRunner {
  /** Ingests the job's source; `signal` aborts when the process shuts down (the job is then resumed later). */
  run(job: JobRow, signal: AbortSignal): Promise<void>;
  /** Records that a source's sync was given up (its job crashed its process every time); never throws. */
  giveUp(job: JobRow, reason: string): Promise<void>;
  /** Queues an ingest job for every source whose scheduled re-sync is due; returns how many. */
  queueDue(now: string): Promise<number>;
  /** Ends what the runner keeps running between jobs (the parse sandbox's processes). */
  close(): Promise<void>;
}

/** How often the worker looks for sources due for a scheduled re-sync. */
const SCHEDULE_INTERVAL_MS = 30_000;

function later(clock: Clock, ms: number): string {
  return new Date(clock.now().getTime() + ms).toISOString();
}

function agentContext(workspaceId: string, chatbotId: string, trx: Transaction<Database>): OperationContext {
  return { actor: { type: 'system', id: chatbotId, name: 'AI Agent', workspaceId }, request: { requestId: null, ip: null, userAgent: null }, trx };
}

/**
 * The durable reply worker. A job is recorded with its `user` message; a runner claims it with a lease,
 * asks the engine, and in ONE transaction re-checks the job is not done yet, appends the assistant message
 * and marks the job done, so an answer is stored exactly once however many runners raced (several
 * instances, a widget request answering inline, a runner that outlived its lease). A runner that dies
 * leaves a lease that lapses, and the job is claimed again: that is the crash recovery. The same runner
 * takes the ingest jobs of knowledge sources from the same queue, in slots of their own (`ingest`).
 */
export function createReplyWorker(deps: ReplyWorkerDeps) {
  const { db, clock, engine, messages, log, leaseMs, pollIntervalMs, concurrency, ingest, queues = [] } = deps;
  // Every job in flight (stop() waits for them), and the poller's own jobs among them, per kind: each kind
  // has its own slots (REPLY_CONCURRENCY, INGEST_CONCURRENCY), so a long ingestion never holds up a reply.
  const active = new Set<Promise<unknown>>();
  const polled: Record<JobKind, Set<Promise<unknown>>> = { reply: new Set(), ingest: new Set() };
  const slots: Record<JobKind, number> = { reply: concurrency, ingest: ingest?.concurrency ?? 0 };
  const queued = new Map<ClaimableQueue, Set<Promise<unknown>>>(queues.map((queue) => [queue, new Set()]));
  let lastScheduleCheck = 0;
  // Jobs this process is running, by id: a request whose job the poller took awaits it here.
  const running = new Map<string, Promise<JobOutcome>>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = true;
  // Aborted by drain() (shutting down): every reply being generated ends at once with the fallback answer,
  // which is stored and delivered, so no visitor is left without an answer and the process can exit in time.
  let shutdown = new AbortController();
  let ticking = false;
  // A tick asked for while one runs (a slot freed meanwhile): run again when it ends, so no free slot waits for the poll.
  let tickAgain = false;

  function track<T>(work: Promise<T>): Promise<T> {
    active.add(work);
    void work.finally(() => active.delete(work)).catch(() => undefined);
    return work;
  }

  function run(job: ReplyJobRow, stream?: ReplyStream): Promise<JobOutcome> {
    const work = track(execute(job, stream));
    running.set(job.id, work);
    void work.finally(() => running.delete(job.id)).catch(() => undefined);
    return work;
  }

  // Stores the answer (or none) with its sources and outcome, and marks the job done, unless another runner
  // already did. `question` is the visitor text answered (recorded when the answer is `unanswered`).
  async function finish(job: ReplyJobRow, output: ReplyOutput | null, question: string | null = null): Promise<JobOutcome> {
    return inTransaction(db, {}, async (trx) => {
      const current = await replyJobRepository.findForUpdate(trx, job.workspace_id, job.id);
      if (!current || current.state === 'done') {
        const stored = current?.reply_message_id ? await messageRepository.find(trx, job.workspace_id, current.reply_message_id) : undefined;
        return stored ? { status: 'answered', reply: presentMessage(stored) } : { status: 'silent' };
      }
      const conversation = await conversationRepository.find(trx, job.workspace_id, job.conversation_id, { forUpdate: true });
      const chatbot = conversation ? await chatbotRepository.find(trx, job.workspace_id, conversation.chatbot_id) : undefined;
      let reply: MessageView | null = null;
      if (output !== null && conversation && chatbot && agentTalks(chatbot, conversation) && conversation.status === 'open' && conversation.mode === 'agent') {
        reply = await messages.append(agentContext(job.workspace_id, conversation.chatbot_id, trx), conversation.id, {
          role: 'assistant',
          content: output.content,
          author: { type: 'agent', id: conversation.chatbot_id },
          answer: { sources: output.sources, outcome: output.outcome, question },
        });
      }
      const now = clock.now().toISOString();
      await replyJobRepository.update(trx, job.workspace_id, job.id, { state: 'done', locked_until: null, reply_message_id: reply?.id ?? null, updated_at: now });
      return reply ? { status: 'answered', reply } : { status: 'silent' };
    });
  }

  async function retryOrFail(job: JobRow, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const giveUp = Number(job.attempts) >= MAX_ATTEMPTS[job.kind];
    log.error({ err: error, job_id: job.id, kind: job.kind, attempts: job.attempts }, giveUp ? `${job.kind} job failed for good` : `${job.kind} job failed; will retry`);
    await replyJobRepository.update(db, job.workspace_id, job.id, {
      state: giveUp ? 'failed' : 'pending',
      locked_until: null,
      last_error: message.slice(0, 1000),
      run_after: later(clock, 1000 * 2 ** Number(job.attempts)),
      updated_at: clock.now().toISOString(),
    });
  }

  // Runs a claimed job: transcript and agent, the engine, then the exactly-once finish.
  async function execute(job: ReplyJobRow, stream: ReplyStream = {}): Promise<JobOutcome> {
    const heartbeat = setInterval(() => {
      replyJobRepository.renew(db, job.workspace_id, job.id, later(clock, leaseMs)).catch((error: unknown) => log.warn({ err: error, job_id: job.id }, 'reply job lease renewal failed'));
    }, Math.max(100, Math.floor(leaseMs / 3)));
    try {
      const conversation: ConversationRow | undefined = await conversationRepository.find(db, job.workspace_id, job.conversation_id);
      const message: MessageRow | undefined = await runtimeRepository.findMessage(db, job.workspace_id, job.message_id);
      const chatbot = conversation ? await chatbotRepository.find(db, job.workspace_id, conversation.chatbot_id) : undefined;
      if (!conversation || !message || !chatbot || conversation.status !== 'open' || conversation.mode !== 'agent') return await finish(job, null);
      // A paused or archived agent answers nothing (and its model is not called): the job ends without an answer.
      if (!agentTalks(chatbot, conversation)) {
        log.info({ job_id: job.id, chatbot_id: chatbot.id, status: chatbot.status }, 'reply job ended without an answer: the agent is not active');
        return await finish(job, null);
      }
      const transcript = await runtimeRepository.transcript(db, job.workspace_id, conversation.id, message, TRANSCRIPT_LENGTH);
      const contactKnown = conversation.lead_id !== null || conversation.visitor_email !== null;
      const output = await engine.reply({ workspaceId: job.workspace_id, chatbot, transcript, contactKnown, locale: conversation.locale, ...stream, signal: shutdown.signal });
      // Shutting down (drain) ends a reply with the fallback answer, stored like any other.
      if (output.failure === 'aborted') log.info({ job_id: job.id, source: output.source }, 'reply ended with the fallback answer: shutting down');
      else if (output.fallback) log.warn({ job_id: job.id, source: output.source, failure: output.failure }, 'reply engine answered with its fallback');
      return await finish(job, output, message.content);
    } catch (error) {
      await retryOrFail(job, error).catch((cause: unknown) => log.error({ err: cause, job_id: job.id }, 'could not record a reply job failure'));
      return { status: 'failed', error: error instanceof Error ? error.message : String(error) };
    } finally {
      clearInterval(heartbeat);
    }
  }

  // Runs a claimed ingest job under its lease: done when the source is synced, else retried with backoff.
  // Shutting down aborts it between documents; it goes back to pending and the next runner resumes it
  // (documents already stored with the same content hash are skipped).
  async function executeIngest(job: JobRow, runner: IngestRunner): Promise<void> {
    const heartbeat = setInterval(() => {
      replyJobRepository.renew(db, job.workspace_id, job.id, later(clock, leaseMs)).catch((error: unknown) => log.warn({ err: error, job_id: job.id }, 'ingest job lease renewal failed'));
    }, Math.max(100, Math.floor(leaseMs / 3)));
    const signal = shutdown.signal;
    // Shutting down does not wait for a page that is slow to answer: the job is handed back at once and
    // resumed by the next runner; the abandoned fetch ends with the process.
    let stopListening = () => {};
    const interrupted = new Promise<never>((_, reject) => {
      const stop = () => reject(new Error('ingestion interrupted: shutting down'));
      if (signal.aborted) stop();
      // Removed when the job ends: the shutdown signal is shared by every job of the process.
      signal.addEventListener('abort', stop, { once: true });
      stopListening = () => signal.removeEventListener('abort', stop);
    });
    interrupted.catch(() => undefined);
    try {
      const work = runner.run(job, signal);
      work.catch(() => undefined);
      await Promise.race([work, interrupted]);
      await replyJobRepository.update(db, job.workspace_id, job.id, { state: 'done', locked_until: null, updated_at: clock.now().toISOString() });
    } catch (error) {
      if (signal.aborted) {
        await replyJobRepository
          .handBack(db, job.workspace_id, job.id, clock.now().toISOString())
          .catch((cause: unknown) => log.warn({ err: cause, job_id: job.id }, 'could not hand an ingest job back'));
        return;
      }
      await retryOrFail(job, error).catch((cause: unknown) => log.error({ err: cause, job_id: job.id }, 'could not record an ingest job failure'));
    } finally {
      clearInterval(heartbeat);
      stopListening();
    }
  }

  // Scheduled re-syncs: sources whose next_sync_at has passed get an ingest job (at most every 30 s).
  async function queueScheduled(): Promise<void> {
    if (!ingest || (lastScheduleCheck !== 0 && clock.monotonicMs() - lastScheduleCheck < SCHEDULE_INTERVAL_MS)) return;
    lastScheduleCheck = clock.monotonicMs();
    const queued = await ingest.runner.queueDue(clock.now().toISOString());
    if (queued > 0) log.info({ queued }, 'scheduled source re-syncs queued');
  }

  // Jobs whose runner died holding them on every attempt (a poison pill that takes its process down) are
  // failed for good instead of being claimed again; a source says its sync was given up.
  async function failExhausted(kind: JobKind): Promise<void> {
    const given = await replyJobRepository.failExhausted(db, kind, clock.now().toISOString(), MAX_ATTEMPTS[kind], CRASHED_REPEATEDLY);
    for (const job of given) {
      log.error({ job_id: job.id, kind, attempts: job.attempts, reason: CRASHED_REPEATEDLY }, `${kind} job given up: its runner died on every attempt`);
      if (job.kind === 'ingest' && ingest) await ingest.runner.giveUp(job, CRASHED_REPEATEDLY);
    }
  }

  // Holds a slot while the job runs; a freed slot looks for the next job at once.
  function occupy(slotsInUse: Set<Promise<unknown>>, work: Promise<unknown>): void {
    slotsInUse.add(work);
    void work
      .finally(() => {
        slotsInUse.delete(work);
        void tick();
      })
      .catch(() => undefined);
  }

  // Claims and starts due jobs of each kind (and of each other queue) until none is left or its slots are used up.
  async function tick(): Promise<void> {
    if (stopped) return;
    if (ticking) {
      tickAgain = true;
      return;
    }
    ticking = true;
    tickAgain = false;
    try {
      await queueScheduled();
      for (const kind of ['reply', 'ingest'] as const) {
        if (polled[kind].size < slots[kind]) await failExhausted(kind);
        while (!stopped && polled[kind].size < slots[kind]) {
          const now = clock.now().toISOString();
          const job = await replyJobRepository.claimNext(db, kind, now, later(clock, leaseMs), MAX_ATTEMPTS[kind]);
          if (!job) break;
          if (stopped) {
            // Claimed while draining: not started, so it stays for the next process rather than get the fallback.
            await replyJobRepository.handBack(db, job.workspace_id, job.id, clock.now().toISOString());
            break;
          }
          const work = job.kind === 'ingest' && ingest ? track(executeIngest(job, ingest.runner)) : run(job as ReplyJobRow);
          occupy(polled[kind], work);
        }
      }
      for (const [queue, inFlight] of queued) {
        while (!stopped && inFlight.size < queue.concurrency) {
          const job = await queue.claimNext();
          if (!job) break;
          if (stopped) {
            await queue.release(job);
            break;
          }
          occupy(inFlight, track(queue.run(job, shutdown.signal)));
        }
      }
    } catch (error) {
      log.warn({ err: error }, 'job runner could not claim jobs');
    } finally {
      ticking = false;
      if (tickAgain) void tick();
    }
  }

  /** Looks for due jobs soon (right after a job was recorded; the commit may still be in flight). */
  function nudge(): void {
    if (stopped) return;
    setTimeout(() => void tick(), 20).unref();
  }

  // How long a request waits for another runner's answer before giving up on answering inline.
  async function awaitOtherRunner(job: ReplyJobRow): Promise<JobOutcome> {
    const deadline = Date.now() + leaseMs * 2;
    // Draining: the other runner answers (or its job is taken up after restart); this request ends now.
    while (Date.now() < deadline && !shutdown.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const local = running.get(job.id);
      if (local) return local;
      const current = await replyJobRepository.findForUpdate(db, job.workspace_id, job.id);
      if (!current || current.state === 'done') return finish(job, null);
      if (current.state === 'failed') return { status: 'failed', error: current.last_error ?? 'failed' };
    }
    return { status: 'failed', error: 'the answer is taking longer than expected; it will appear in the conversation' };
  }

  function drain(): void {
    stopped = true;
    if (timer) clearInterval(timer);
    timer = null;
    shutdown.abort(new Error('the server is shutting down'));
  }

  return {
    /** Starts polling (expired leases are reclaimed on the first tick: crash recovery). */
    start(): void {
      if (!stopped) return;
      stopped = false;
      shutdown = new AbortController();
      timer = setInterval(() => void tick(), pollIntervalMs);
      timer.unref();
      void tick();
    },

    /**
     * Shutting down: claims no more jobs and tells every reply in flight (inline answers, streams, worker
     * jobs) to end now with the fallback answer, which is stored. Jobs not started stay pending for the
     * next process. Returns at once; stop() waits for the replies.
     */
    drain,

    /** Drains (see drain()) and waits for the replies in flight to be stored. */
    async stop(): Promise<void> {
      drain();
      await Promise.allSettled([...active]);
      await ingest?.runner.close();
    },

    nudge,

    /**
     * Answers one message now, in the caller's request (the widget streams the deltas): claims its job,
     * or waits for the runner that holds it. Null when no job was recorded (human mode).
     */
    async answerNow(workspaceId: string, messageId: string, stream: ReplyStream = {}): Promise<JobOutcome | null> {
      const job = await replyJobRepository.findByMessage(db, workspaceId, messageId);
      if (!job) return null;
      const claimed = await replyJobRepository.claim(db, workspaceId, job.id, clock.now().toISOString(), later(clock, leaseMs), MAX_ATTEMPTS.reply);
      if (claimed) return run(claimed as ReplyJobRow, stream);
      return running.get(job.id) ?? track(awaitOtherRunner(job));
    },
  };
}

export type ReplyWorker = ReturnType<typeof createReplyWorker>;

/** Listeners for an answer being generated: its pieces, and the withdrawal of pieces already sent (then the fallback follows). */
export interface ReplyStream {
  onDelta?: (text: string) => void;
  onReset?: () => void;
}

/**
 * The durable ReplyRequester: records the job in the message's transaction. Messages from the widget are
 * answered inline by their request, so only the others (the API) wake the worker at once; the poll picks
 * up anything a request could not finish.
 */
export function durableReplies(clock: Clock, wake: () => void): ReplyRequester {
  return {
    async requestReply(trx, conversation, message): Promise<void> {
      const now = clock.now().toISOString();
      await replyJobRepository.insert(trx, {
        id: newId('replyJob', Date.parse(now)),
        workspace_id: conversation.workspace_id,
        kind: 'reply',
        source_id: null,
        conversation_id: conversation.id,
        message_id: message.id,
        state: 'pending',
        attempts: 0,
        run_after: now,
        locked_until: null,
        last_error: null,
        reply_message_id: null,
        created_at: now,
        updated_at: now,
      });
      if (message.author_type !== 'visitor') wake();
    },
  };
}

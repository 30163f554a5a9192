/**
 * A queue of its own that the one job runner (reply-worker.ts) polls beside reply_jobs, in slots of its
 * own: webhook deliveries, whose rows carry their own state and lease (docs/decisions/0023-webhooks.md).
 * The queue claims with a lease, runs a job to its recorded outcome, and hands a job back when the
 * process shuts down before starting it.
 */
export interface ClaimableQueue<Job = unknown> {
  /** Names the queue in logs. */
  readonly kind: string;
  /** Jobs of this queue one process runs at once. */
  readonly concurrency: number;
  /** Claims the next due job (or one whose lease lapsed), or undefined when none is due. */
  claimNext(): Promise<Job | undefined>;
  /** Runs a claimed job and records its outcome; never throws. `signal` aborts when the process shuts down. */
  run(job: Job, signal: AbortSignal): Promise<void>;
  /** Gives a claimed job back unstarted (claimed while shutting down). */
  release(job: Job): Promise<void>;
}

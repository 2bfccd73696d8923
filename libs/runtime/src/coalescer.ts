/**
 * When a woken task starts: at once (in the caller's turn), on the next turn of the event loop
 * (setImmediate: whatever else arrived in this turn joins the batch), or after `ms` milliseconds.
 */
export type WakeDelay = 'now' | 'next-turn' | { ms: number };

/**
 * One home for the "wake a drain" schedules of the outbox relay, the webhook dispatcher's claims
 * and the fan-out's and dispatcher's batch flushes: `wake()` starts the task unless it is running,
 * in which case it runs once more right after (however often it was woken meanwhile). Never two
 * runs at once; a burst of wakes becomes at most two runs. The task handles its own errors
 * (a rejection is passed to `onError`, or dropped).
 */
export class Coalescer {
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly delay: WakeDelay = 'now',
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** The run in progress (or waiting out its delay), if any. */
  get current(): Promise<void> | undefined {
    return this.running;
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const run = this.delay === 'now' ? this.task() : this.start().then(() => this.task());
    this.running = run.catch(this.onError).finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Waits until no run is in progress or due (runs woken meanwhile included). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** No more runs; waits for the one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.again = false;
    await this.running;
  }

  private start(): Promise<void> {
    if (this.delay === 'next-turn') return new Promise<void>((resolve) => setImmediate(resolve));
    return new Promise<void>((resolve) =>
      setTimeout(resolve, this.delay === 'now' ? 0 : (this.delay as { ms: number }).ms),
    );
  }
}

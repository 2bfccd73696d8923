import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Runs `task` every `intervalMs` (not overlapping itself) until stopped; failures are logged and
 * retried on the next tick. For housekeeping, where a missed run only delays cleanup.
 */
export function startPeriodicTask(
  name: string,
  intervalMs: number,
  task: () => Promise<unknown>,
  logger: Logger,
) {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = task()
      .then((result) => logger.debug({ task: name, result }, 'periodic task done'))
      .catch((error: Error) => logger.warn({ task: name, err: error.message }, 'periodic task failed'))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * A Nest provider that runs `run()` every `intervalMs` from application bootstrap until shutdown
 * (the housekeeping jobs of every service: retention, compaction).
 */
export abstract class PeriodicJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: { stop(): Promise<void> };

  protected constructor(
    private readonly jobName: string,
    private readonly intervalMs: number,
    protected readonly logger: Logger,
  ) {}

  /** One run; also called directly (a CLI command, a test). */
  abstract run(): Promise<unknown>;

  onApplicationBootstrap(): void {
    this.task = startPeriodicTask(this.jobName, this.intervalMs, () => this.run(), this.logger);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}

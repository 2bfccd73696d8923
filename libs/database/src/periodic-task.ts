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

/**
 * When the next attempt goes (docs/webhooks.md). `schedule[n-1]` is the delay in seconds after
 * the n-th failed attempt; there are schedule.length + 1 attempts in all. Each delay gets up to
 * 10% of jitter added (never less than scheduled), so deliveries that failed together do not all
 * return at the same instant. A Retry-After from the subscriber (429, 503) is a floor.
 */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

export function nextAttemptDelayMs(
  schedule: readonly number[],
  attempt: number,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number {
  const scheduled = schedule[Math.min(attempt, schedule.length) - 1] ?? schedule[schedule.length - 1];
  const jittered = scheduled * 1000 * (1 + 0.1 * random());
  const floor =
    retryAfterSeconds === undefined ? 0 : Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000;
  return Math.round(Math.max(jittered, floor));
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Polls until `check` stops throwing (or returns a truthy value), instead of sleeping a fixed time.
 * The last failure is rethrown when time runs out, so the test shows what was still wrong.
 */
export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<Exclude<T, false | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = new Error('condition never held');
  while (Date.now() < deadline) {
    try {
      const result = await check();
      if (result !== false && result !== undefined && result !== null)
        return result as Exclude<T, false | null | undefined>;
      lastError = new Error(`condition returned ${String(result)}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw lastError;
}

/**
 * Waits a fixed time: only where the time itself is the point (a rate-limit window passing, a
 * stall lasting), never to wait for a condition (that is `eventually`).
 */
export { setTimeout as sleep } from 'node:timers/promises';

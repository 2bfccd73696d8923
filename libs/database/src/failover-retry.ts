import { isConnectionLost } from './database-errors';

/**
 * Pauses between attempts: about 1.9 s in all, well inside the default RPC_TIMEOUT_MS (5 s), for
 * HAProxy to send new connections to a promoted leader (a Patroni switchover, or the tail of a
 * failover); short enough that an outage still answers 503 before the caller gives up.
 */
export const FAILOVER_RETRY_DELAYS_MS: readonly number[] = [100, 300, 600, 900];
/** No attempt starts later than this after the first. */
export const FAILOVER_RETRY_BUDGET_MS = 2000;
/** Kept for the last attempt and the reply when the caller's deadline is what bounds the retries. */
const REPLY_MARGIN_MS = 500;

/**
 * Runs `work` again while it fails because its Postgres connection broke or was refused (the old
 * leader went away, HAProxy has no new one yet), within FAILOVER_RETRY_BUDGET_MS and, given the
 * caller's deadline (`answerBy`), early enough to answer it. Only for work that is safe to repeat: reads, and writes
 * whose command id the command log makes idempotent (a commit whose answer was lost is then found
 * on the next attempt, never applied twice). Any other error, or the last one, is thrown.
 */
export async function retryWhileDatabaseUnavailable<T>(
  work: () => Promise<T>,
  options: { answerBy?: number; delaysMs?: readonly number[] } = {},
): Promise<T> {
  const startedAt = Date.now();
  const lastStart = Math.min(
    startedAt + FAILOVER_RETRY_BUDGET_MS,
    (options.answerBy ?? Infinity) - REPLY_MARGIN_MS,
  );
  for (const delay of options.delaysMs ?? FAILOVER_RETRY_DELAYS_MS) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionLost(error) || Date.now() + delay > lastStart) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  return work();
}

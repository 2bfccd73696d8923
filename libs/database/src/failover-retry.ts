import { isConnectionLost, isLockConflict } from './database-errors';

/**
 * Pauses between attempts; the last is repeated. Short at first (a switchover, or HAProxy still
 * cutting the old leader's sessions), then twice a second while a failover elects and promotes a
 * new leader (docs/scaling.md, "Postgres: Patroni behind HAProxy").
 */
export const FAILOVER_RETRY_DELAYS_MS: readonly number[] = [100, 200, 400, 500];
/** Without a caller's deadline, no attempt starts later than this after the first. */
export const FAILOVER_RETRY_BUDGET_MS = 2000;
/** Kept for the last attempt and the reply when the caller's deadline is what bounds the retries. */
const REPLY_MARGIN_MS = 500;

/**
 * Runs `work` again while it fails because its Postgres connection broke or was refused (the old
 * leader went away, HAProxy has no new one yet): until the caller's deadline (`answerBy`, a
 * `Date.now()` time), early enough to answer it, or for FAILOVER_RETRY_BUDGET_MS without one. A
 * request caught in a failover is so held until the new leader serves it, not answered 503. So is
 * work Postgres rolled back to break a deadlock (with another request, or with a migration run
 * beside the serving release) or that waited too long for a lock: it is run again once the other
 * transaction has moved on, not answered 500. Only for work that is safe to repeat: reads, and
 * writes whose command id the command log makes idempotent (a commit whose answer was lost is
 * then found on the next attempt, never applied twice). Any other error, or the last one, is
 * thrown.
 */
export async function retryWhileDatabaseUnavailable<T>(
  work: () => Promise<T>,
  options: { answerBy?: number; delaysMs?: readonly number[] } = {},
): Promise<T> {
  const lastStart =
    options.answerBy === undefined
      ? Date.now() + FAILOVER_RETRY_BUDGET_MS
      : options.answerBy - REPLY_MARGIN_MS;
  const delays = options.delaysMs ?? FAILOVER_RETRY_DELAYS_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const delay = delays[Math.min(attempt, delays.length - 1)];
      const transient = isConnectionLost(error) || isLockConflict(error);
      if (!transient || Date.now() + delay > lastStart) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

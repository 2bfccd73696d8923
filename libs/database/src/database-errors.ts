import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { DomainError } from '@app/errors';

/**
 * True when `test` holds for the SQLSTATE or socket code and the message of `error` or of the
 * driver error TypeORM wraps in it.
 */
function errorMatches(error: unknown, test: (code: string, message: string) => boolean): boolean {
  const failure = error as { code?: unknown; message?: unknown; driverError?: unknown } | undefined;
  if (!failure || typeof failure !== 'object') return false;
  if (failure.driverError && errorMatches(failure.driverError, test)) return true;
  const code = typeof failure.code === 'string' ? failure.code : '';
  const message = typeof failure.message === 'string' ? failure.message : '';
  return test(code, message);
}

/**
 * SQLSTATE classes and codes that mean "the database cannot serve this now", not "this request
 * is wrong": connection exceptions (08), the server shutting down or starting (57P01-57P03),
 * too many connections (53300), a statement cancelled by statement_timeout (57014), and a write
 * that reached a server no longer (or not yet) the leader (25006, read-only transaction).
 */
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57014', '57P01', '57P02', '57P03', '25006']);

/** Socket errors of a connection that cannot be made or was lost. */
const UNAVAILABLE_SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * What node-postgres and pg-pool say, without a code, when a connection cannot be had in time,
 * is lost, or a query gets no answer within query_timeout.
 */
const UNAVAILABLE_MESSAGES = [
  /^timeout exceeded when trying to connect/i,
  /^Connection terminated/i,
  /^Query read timeout/i,
  /is not queryable/i,
  /^Connection ended/i,
];

/**
 * A statement that lost a lock to other transactions: a deadlock Postgres broke by cancelling it
 * (40P01), or a wait longer than its `lock_timeout` (55P03). Nothing it did is kept; trying again
 * once the other transactions have finished succeeds.
 */
const LOCK_CONFLICT_SQLSTATES = new Set(['40P01', '55P03']);

export function isLockConflict(error: unknown): boolean {
  return errorMatches(error, (code) => LOCK_CONFLICT_SQLSTATES.has(code));
}

/** True when `error` (from pg, pg-pool or TypeORM wrapping them) means Postgres is unreachable or too slow. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (isConnectionLost(error)) return true;
  return errorMatches(
    error,
    (code, message) =>
      UNAVAILABLE_SQLSTATES.has(code) ||
      code.startsWith('08') ||
      UNAVAILABLE_SOCKET_ERRORS.has(code) ||
      UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message)),
  );
}

/**
 * Errors of a connection that broke or could not be made at once, as during a leader change: the
 * old leader shut down (57P01/57P02) or refused, a replica not yet promoted answered (57P03,
 * 25006 read-only transaction), the socket was reset. Not timeouts: a dependency that is slow has
 * already used the caller's time, and trying again would only outlast the caller.
 */
const CONNECTION_LOST_SQLSTATES = new Set(['57P01', '57P02', '57P03', '25006']);
const CONNECTION_LOST_SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
const CONNECTION_LOST_MESSAGES = [
  /^Connection terminated unexpectedly/i,
  /^Connection ended/i,
  // pg, for a client whose connection broke while it was held between two queries.
  /^Client has encountered a connection error and is not queryable/i,
];
/**
 * TypeORM releases a query runner whose connection emitted an error (the server ended it between
 * two statements of a transaction); the transaction's next statement then fails with one of these
 * instead of the connection's error. Nothing else of ours uses a runner after releasing it.
 */
const RELEASED_RUNNER_ERRORS = [QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError];

export function isConnectionLost(error: unknown): boolean {
  if (RELEASED_RUNNER_ERRORS.some((released) => error instanceof released)) return true;
  return errorMatches(
    error,
    (code, message) =>
      CONNECTION_LOST_SQLSTATES.has(code) ||
      CONNECTION_LOST_SOCKET_ERRORS.has(code) ||
      CONNECTION_LOST_MESSAGES.some((pattern) => pattern.test(message)),
  );
}

export function databaseUnavailable(): DomainError {
  return new DomainError('database_unavailable', 'The database is unavailable; retry shortly.');
}

/** Runs `work`; a failure meaning Postgres is unavailable becomes the 503 `database_unavailable`. */
export async function orDatabaseUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isDatabaseUnavailable(error) ? databaseUnavailable() : error;
  }
}

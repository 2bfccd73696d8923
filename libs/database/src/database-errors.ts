import { DomainError } from '@app/errors';

/**
 * SQLSTATE classes and codes that mean "the database cannot serve this now", not "this request
 * is wrong": connection exceptions (08), the server shutting down or starting (57P01-57P03),
 * too many connections (53300), and a statement cancelled by statement_timeout (57014).
 */
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57014', '57P01', '57P02', '57P03']);

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

/** True when `error` (from pg, pg-pool or TypeORM wrapping them) means Postgres is unreachable or too slow. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const failure = error as { code?: unknown; message?: unknown; driverError?: unknown } | undefined;
  if (!failure || typeof failure !== 'object') return false;
  if (failure.driverError && isDatabaseUnavailable(failure.driverError)) return true;
  const code = typeof failure.code === 'string' ? failure.code : '';
  if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_SOCKET_ERRORS.has(code))
    return true;
  const message = typeof failure.message === 'string' ? failure.message : '';
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
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

import { DomainError } from '@app/errors';
import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import {
  isConnectionLost,
  isDatabaseUnavailable,
  isLockConflict,
  orDatabaseUnavailable,
} from './database-errors';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['pool acquisition timeout', new Error('timeout exceeded when trying to connect')],
    ['connect timeout', new Error('Connection terminated due to connection timeout')],
    ['connection lost', new Error('Connection terminated unexpectedly')],
    ['no answer within query_timeout', new Error('Query read timeout')],
    ['a dead client', new Error('Client has encountered a connection error and is not queryable')],
    ['statement_timeout', withCode('canceling statement due to statement timeout', '57014')],
    ['server shutting down', withCode('terminating connection due to administrator command', '57P01')],
    ['server starting', withCode('the database system is starting up', '57P03')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['a connection exception', withCode('connection failure', '08006')],
    [
      'any of these wrapped by TypeORM',
      new QueryFailedError('SELECT 1', [], withCode('canceling statement due to statement timeout', '57014')),
    ],
  ])('%s: yes', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error (a bug)', withCode('syntax error at or near "SELEC"', '42601')],
    ['a check violation', withCode('new row violates check constraint', '23514')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a domain error', new DomainError('not_found', 'Conversation x was not found.')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s: no', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('orDatabaseUnavailable', () => {
  it('turns an outage into the 503 database_unavailable and lets everything else through', async () => {
    await expect(
      orDatabaseUnavailable(() => Promise.reject(withCode('connect ECONNREFUSED', 'ECONNREFUSED'))),
    ).rejects.toMatchObject({ code: 'database_unavailable', status: 503 });
    const bug = new TypeError('bug');
    await expect(orDatabaseUnavailable(() => Promise.reject(bug))).rejects.toBe(bug);
    await expect(orDatabaseUnavailable(async () => 42)).resolves.toBe(42);
  });
});

describe('isLockConflict', () => {
  it.each([
    ['a deadlock Postgres broke', withCode('deadlock detected', '40P01')],
    ['lock_timeout', withCode('canceling statement due to lock timeout', '55P03')],
    [
      'either wrapped by TypeORM',
      new QueryFailedError('ALTER TABLE x', [], withCode('deadlock detected', '40P01')),
    ],
  ])('%s: yes', (_name, error) => {
    expect(isLockConflict(error)).toBe(true);
  });

  it.each([
    ['statement_timeout', withCode('canceling statement due to statement timeout', '57014')],
    ['an undefined table', withCode('relation "x" does not exist', '42P01')],
    ['a serialization failure', withCode('could not serialize access', '40001')],
    ['nothing', undefined],
  ])('%s: no', (_name, error) => {
    expect(isLockConflict(error)).toBe(false);
  });
});

describe('isConnectionLost', () => {
  it.each([
    ['the leader shutting down', withCode('terminating connection due to administrator command', '57P01')],
    ['a write reaching a replica', withCode('cannot execute INSERT in a read-only transaction', '25006')],
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection lost mid-query', new Error('Connection terminated unexpectedly')],
    [
      'a held client whose connection broke',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    [
      'a transaction whose runner TypeORM released on a connection error',
      new QueryRunnerProviderAlreadyReleasedError(),
    ],
    ['a query runner released on a connection error', new QueryRunnerAlreadyReleasedError()],
  ])('%s: yes, and unavailable', (_name, error) => {
    expect(isConnectionLost(error)).toBe(true);
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['statement_timeout', withCode('canceling statement due to statement timeout', '57014')],
    ['no answer within query_timeout', new Error('Query read timeout')],
    ['a client we ended', new Error('Client was closed and is not queryable')],
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
  ])('%s: no', (_name, error) => {
    expect(isConnectionLost(error)).toBe(false);
  });
});

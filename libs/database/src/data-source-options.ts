import type { DataSourceOptions } from 'typeorm';
import { DATABASE_BOUND_DEFAULTS } from '@app/config';
import { BoundedClient } from './bounded-client';

/** The database settings of every service (libs/config databaseSchema); the bounds have its defaults. */
export interface DatabaseSettings {
  DATABASE_URL: string;
  DATABASE_POOL_SIZE: number;
  DATABASE_QUERY_TIMEOUT_MS?: number;
  DATABASE_CONNECT_TIMEOUT_MS?: number;
}

/** How long a transaction may sit idle (its client stalled or gone) before Postgres ends it and frees its locks. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** The client gives up this much after Postgres's own statement_timeout, which normally answers first. */
const CLIENT_TIMEOUT_SLACK_MS = 100;

/**
 * The time bounds of every connection (docs/operations.md, Configuration): a statement runs at most
 * DATABASE_QUERY_TIMEOUT_MS (Postgres cancels it; if Postgres says nothing at all, the client gives
 * up just after and drops the connection), and getting a connection from the pool, or opening
 * one, takes at most DATABASE_CONNECT_TIMEOUT_MS.
 */
function connectionBounds(
  settings: Pick<DatabaseSettings, 'DATABASE_QUERY_TIMEOUT_MS' | 'DATABASE_CONNECT_TIMEOUT_MS'>,
) {
  return {
    connectionTimeoutMillis:
      settings.DATABASE_CONNECT_TIMEOUT_MS ?? DATABASE_BOUND_DEFAULTS.DATABASE_CONNECT_TIMEOUT_MS,
    ...queryBounds(settings.DATABASE_QUERY_TIMEOUT_MS ?? DATABASE_BOUND_DEFAULTS.DATABASE_QUERY_TIMEOUT_MS),
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    // Notices a connection whose peer vanished without a word.
    keepAlive: true,
  };
}

/**
 * Settings of a dedicated pg Client (a LISTEN connection, outside the pool) with the same bounds:
 * connecting within DATABASE_CONNECT_TIMEOUT_MS, each query within DATABASE_QUERY_TIMEOUT_MS.
 */
export function dedicatedClientConfig(
  settings: Omit<DatabaseSettings, 'DATABASE_POOL_SIZE'>,
  applicationName: string,
) {
  return {
    connectionString: settings.DATABASE_URL,
    application_name: applicationName,
    ...connectionBounds(settings),
  };
}

/** pg settings bounding each statement: Postgres cancels it, or failing that, the client gives up. */
export function queryBounds(timeoutMs: number) {
  return { statement_timeout: timeoutMs, query_timeout: timeoutMs + CLIENT_TIMEOUT_SLACK_MS };
}

/** Options every service's DataSource shares; each service adds its schema, entities and migrations. */
export function postgresOptions(settings: DatabaseSettings, applicationName: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.DATABASE_URL,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: settings.DATABASE_POOL_SIZE,
      application_name: applicationName,
      Client: BoundedClient,
      ...connectionBounds(settings),
      // Our prepared statements are tenant-keyed index look-ups whose best plan does not depend on
      // the values; without this Postgres re-plans them (custom plans) and planning costs more
      // than running them. JIT compilation, set off by the cost estimates of the analytics
      // queries' generic plans, adds 20-100 ms to queries that run in a few.
      options: '-c plan_cache_mode=force_generic_plan -c jit=off',
    },
  };
}

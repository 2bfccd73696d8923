import type { DataSourceOptions } from 'typeorm';

/** Options every service's DataSource shares; each service adds its schema, entities and migrations. */
export function postgresOptions(url: string, poolSize: number, applicationName: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: poolSize,
      application_name: applicationName,
      connectionTimeoutMillis: 5000,
      // A runaway query must not hold a pooled connection (and the caller) for ever.
      statement_timeout: 15_000,
      // Our prepared statements are tenant-keyed index look-ups whose best plan does not depend on
      // the values; without this Postgres re-plans them (custom plans) and planning costs more
      // than running them. JIT compilation, set off by the cost estimates of the analytics
      // queries' generic plans, adds 20-100 ms to queries that run in a few.
      options: '-c plan_cache_mode=force_generic_plan -c jit=off',
    },
  };
}

import { DataSource, DataSourceOptions, QueryRunner } from 'typeorm';
import type { Logger } from 'pino';
import { queryBounds } from './data-source-options';

/**
 * A migration (or a replica waiting for another's behind the advisory lock) may take far longer
 * than a request's query; it is still bounded.
 */
const MIGRATION_TIMEOUT_MS = 10 * 60_000;

/**
 * Creates the service's schema and runs its pending migrations under a Postgres advisory lock,
 * so replicas starting together migrate once and the others wait for the result. Uses a
 * connection of its own (`options` name the migrations), closed when done.
 */
export async function prepareDatabase(
  options: DataSourceOptions,
  schema: string,
  logger: Logger,
): Promise<void> {
  const extra = (options as { extra?: object }).extra;
  const dataSource = new DataSource({
    ...options,
    extra: { ...extra, ...queryBounds(MIGRATION_TIMEOUT_MS) },
  });
  await dataSource.initialize();
  try {
    await migrateUnderLock(dataSource, schema, logger);
  } finally {
    await dataSource.destroy();
  }
}

/** How often a replica waiting for another's migrations asks for their lock again. */
const LOCK_POLL_MS = 200;

/**
 * Takes the advisory lock of the schema's migrations, asking again until it is free rather than
 * waiting inside `pg_advisory_lock`: a statement waiting there holds a snapshot, and a migration
 * building an index CONCURRENTLY waits until every snapshot older than its own has ended, so the
 * replica migrating and the ones waiting for it would wait for each other for ever.
 */
async function lockMigrations(runner: QueryRunner, key: string, deadline: number): Promise<void> {
  for (;;) {
    const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [
      key,
    ])) as Array<{ locked: boolean }>;
    if (locked) return;
    if (Date.now() > deadline)
      throw new Error(`Timed out waiting for another replica's migrations (${key}).`);
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

async function migrateUnderLock(dataSource: DataSource, schema: string, logger: Logger): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await lockMigrations(runner, `migrations:${schema}`, Date.now() + MIGRATION_TIMEOUT_MS);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    for (const migration of applied) logger.info({ migration: migration.name }, 'migration applied');
  } finally {
    await runner
      .query('SELECT pg_advisory_unlock(hashtext($1))', [`migrations:${schema}`])
      .catch(() => undefined);
    await runner.release();
  }
}

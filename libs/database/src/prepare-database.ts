import { DataSource, DataSourceOptions, MigrationExecutor, QueryRunner } from 'typeorm';
import type { Logger } from 'pino';
import { queryBounds } from './data-source-options';
import { isLockConflict } from './database-errors';

/**
 * A migration (or a replica waiting for another's behind the advisory lock) may take far longer
 * than a request's query; it is still bounded.
 */
const MIGRATION_TIMEOUT_MS = 10 * 60_000;

/**
 * How long a statement of a migration run in a transaction waits for a table lock, at most. A
 * migration runs while the previous release serves (docs/scaling.md, "Migrations give way to live
 * traffic"): a DDL statement queued for its lock makes every request touching that table queue
 * behind it, so it gives up quickly and is tried again after a pause growing by
 * MIGRATION_RETRY_MS a try. It is also kept to half of Postgres's deadlock_timeout (1 s by
 * default): when a migration and a request each wait for a lock the other holds, the migration's
 * wait ends first, so the migration is rolled back and tried again rather than Postgres cancelling
 * the request (a 500 for the client of a release that does not retry it).
 */
const MIGRATION_LOCK_TIMEOUT_MS = 2_000;
const MIGRATION_RETRY_MS = 500;

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
    boundLockWaits(dataSource, await migrationLockTimeoutMs(dataSource));
    await migrateUnderLock(dataSource, schema, logger);
  } finally {
    await dataSource.destroy();
  }
}

/** MIGRATION_LOCK_TIMEOUT_MS, or half the server's deadlock_timeout if that is shorter. */
async function migrationLockTimeoutMs(dataSource: DataSource): Promise<number> {
  const [{ deadlockMs }] = await dataSource.query<Array<{ deadlockMs: number }>>(
    `SELECT setting::int AS "deadlockMs" FROM pg_settings WHERE name = 'deadlock_timeout'`,
  );
  return Math.max(1, Math.min(MIGRATION_LOCK_TIMEOUT_MS, Math.floor(deadlockMs / 2)));
}

/**
 * Bounds the lock waits of each migration run in a transaction by `lockTimeoutMs` (SET LOCAL, so
 * it ends with the migration's transaction). A migration run outside one (`transaction = false`)
 * only builds or drops indexes CONCURRENTLY, which take no lock a request waits for: its waits for
 * older transactions to end are bounded by the statement timeout alone, as a short lock_timeout
 * would throw away an index built on a large table for one slow request.
 */
function boundLockWaits(dataSource: DataSource, lockTimeoutMs: number): void {
  for (const migration of dataSource.migrations) {
    if (migration.transaction === false) continue;
    const up = migration.up.bind(migration);
    migration.up = async (db: QueryRunner) => {
      await db.query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
      await up(db);
    };
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

/**
 * Runs the pending migrations, each in its own transaction (or none, for those that build an index
 * CONCURRENTLY), until none is left. A migration that lost a lock to live traffic (its
 * lock_timeout, or a deadlock with a request's statement that Postgres broke by cancelling it) was
 * rolled back, or is written to be run again: it is tried again until the deadline.
 */
async function runPendingMigrations(dataSource: DataSource, logger: Logger, deadline: number): Promise<void> {
  const logApplied = (names: string[]) => {
    for (const name of names) logger.info({ migration: name }, 'migration applied');
  };
  let recorded = await executedMigrations(dataSource);
  for (let attempt = 1; ; attempt++) {
    try {
      logApplied(
        (await dataSource.runMigrations({ transaction: 'each' })).map((migration) => migration.name),
      );
      return;
    } catch (error) {
      // A failed run returns nothing, but the migrations before the failing one were committed.
      const now = await executedMigrations(dataSource).catch(() => recorded);
      logApplied([...now].filter((name) => !recorded.has(name)));
      recorded = now;
      const pause = MIGRATION_RETRY_MS * Math.min(attempt, 10);
      if (!isLockConflict(error) || Date.now() + pause > deadline) throw error;
      logger.warn({ err: error, attempt }, 'a migration lost a lock to live traffic; trying it again');
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** The names of the migrations the schema's migrations table records as applied. */
async function executedMigrations(dataSource: DataSource): Promise<Set<string>> {
  const executed = await new MigrationExecutor(dataSource).getExecutedMigrations();
  return new Set(executed.map((migration) => migration.name));
}

async function migrateUnderLock(dataSource: DataSource, schema: string, logger: Logger): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const deadline = Date.now() + MIGRATION_TIMEOUT_MS;
  try {
    await lockMigrations(runner, `migrations:${schema}`, deadline);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await runPendingMigrations(dataSource, logger, deadline);
  } finally {
    await runner
      .query('SELECT pg_advisory_unlock(hashtext($1))', [`migrations:${schema}`])
      .catch(() => undefined);
    await runner.release();
  }
}

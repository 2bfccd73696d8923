import { Client } from 'pg';
import type { DataSourceOptions, MigrationInterface, QueryRunner } from 'typeorm';
import { capturedLogger, eventually, OwnDatabase } from '@app/testing';
import { postgresOptions } from './data-source-options';
import { prepareDatabase } from './prepare-database';

const SCHEMA = 'lock_test';

/** A migration named `name` (TypeORM reads the timestamp from it) of one DDL statement. */
function ddlMigration(name: string, statement: string): new () => MigrationInterface {
  return class implements MigrationInterface {
    name = name;
    async up(db: QueryRunner): Promise<void> {
      await db.query(statement);
    }
    async down(): Promise<void> {}
  };
}

const AddNote1700000000001 = ddlMigration(
  'AddNote1700000000001',
  `ALTER TABLE ${SCHEMA}.items ADD COLUMN note text`,
);
const Broken1700000000002 = ddlMigration(
  'Broken1700000000002',
  `ALTER TABLE ${SCHEMA}.no_such_table ADD COLUMN note text`,
);
const AddOthers1700000000003 = ddlMigration(
  'AddOthers1700000000003',
  `CREATE TABLE ${SCHEMA}.others (id int PRIMARY KEY)`,
);
const AddLabel1700000000004 = ddlMigration(
  'AddLabel1700000000004',
  `ALTER TABLE ${SCHEMA}.items ADD COLUMN label text`,
);
/**
 * Locks `notes`, then, after a pause in which a request queues for `notes`, `items`: the order
 * opposite to a request that writes `items` and then `notes`.
 */
const IndexNotes1700000000005 = ddlMigration(
  'IndexNotes1700000000005',
  `ALTER TABLE ${SCHEMA}.notes ADD COLUMN flag boolean NOT NULL DEFAULT false;
   SELECT pg_sleep(0.2);
   CREATE INDEX items_by_id ON ${SCHEMA}.items (id)`,
);
const IndexItemsConcurrently1700000000006 = class implements MigrationInterface {
  name = 'IndexItemsConcurrently1700000000006';
  transaction = false as const;
  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX CONCURRENTLY items_concurrently ON ${SCHEMA}.items (id)`);
  }
  async down(): Promise<void> {}
};

/**
 * A release's migrations run while the previous release serves: a migration's DDL that meets a
 * table lock held by a request's transaction gives up after its lock_timeout instead of queueing
 * every later request behind it, and is tried again until it is applied.
 */
describe('migrations under live traffic', () => {
  const database = new OwnDatabase('migration_locks');
  const traffic = new Client({ connectionString: database.url, statement_timeout: 10_000 });
  const blocker = new Client({ connectionString: database.url });

  function options(migrations: Array<new () => MigrationInterface>): DataSourceOptions {
    return {
      ...postgresOptions({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 2 }, 'lock-test'),
      schema: SCHEMA,
      migrationsTableName: 'migrations',
      entities: [],
      migrations,
    } as DataSourceOptions;
  }

  async function columnsOfItems(): Promise<string[]> {
    const { rows } = await traffic.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'items' ORDER BY column_name`,
      [SCHEMA],
    );
    return rows.map((row) => row.column_name);
  }

  beforeAll(async () => {
    await database.create();
    await traffic.connect();
    await blocker.connect();
    await traffic.query(
      `CREATE SCHEMA ${SCHEMA}; CREATE TABLE ${SCHEMA}.items (id int PRIMARY KEY);
       CREATE TABLE ${SCHEMA}.notes (id int PRIMARY KEY)`,
    );
  });
  afterAll(async () => {
    await traffic.end();
    await blocker.end();
    await database.drop();
  });

  it('tries again while a transaction holds the table, and applies the migration once it ends', async () => {
    const { logger, lines } = capturedLogger();
    await blocker.query(`BEGIN; SELECT * FROM ${SCHEMA}.items`);
    const migrating = prepareDatabase(options([AddNote1700000000001]), SCHEMA, logger);
    try {
      await eventually(() => lines.some((line) => line.includes('lost a lock to live traffic')), 20_000);
      // Another request's write is served while the migration waits: were the migration's DDL
      // queued for its lock until the blocker ends, this insert would queue behind it, and the
      // blocker ends only after it (statement_timeout fails it instead).
      await traffic.query(`INSERT INTO ${SCHEMA}.items (id) VALUES (1)`);
    } finally {
      await blocker.query('COMMIT');
    }
    await migrating;

    expect(await columnsOfItems()).toEqual(['id', 'note']);
    const warnings = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 40);
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0].err.code).toBe('55P03');
    const applied = lines.filter((line) => line.includes('migration applied'));
    expect(applied).toHaveLength(1);
  }, 30_000);

  it('does not try again a migration that failed for another reason', async () => {
    const { logger, lines } = capturedLogger();
    await expect(
      prepareDatabase(options([AddNote1700000000001, Broken1700000000002]), SCHEMA, logger),
    ).rejects.toThrow(/no_such_table/);
    expect(lines.filter((line) => line.includes('lost a lock'))).toEqual([]);
  });

  it('logs each migration applied once, also those applied by an attempt that then lost a lock', async () => {
    const { logger, lines } = capturedLogger();
    await blocker.query(`BEGIN; SELECT * FROM ${SCHEMA}.items`);
    const migrating = prepareDatabase(
      options([AddNote1700000000001, AddOthers1700000000003, AddLabel1700000000004]),
      SCHEMA,
      logger,
    );
    try {
      // The first attempt commits AddOthers (a table of its own), then loses items' lock.
      await eventually(() => lines.some((line) => line.includes('lost a lock to live traffic')), 20_000);
    } finally {
      await blocker.query('COMMIT');
    }
    await migrating;

    const applied = lines
      .map((line) => JSON.parse(line) as { msg: string; migration?: string })
      .filter((line) => line.msg === 'migration applied')
      .map((line) => line.migration);
    expect(applied).toEqual(['AddOthers1700000000003', 'AddLabel1700000000004']);
  }, 30_000);

  it('gives way when it and a request each wait for a lock the other holds: the request commits', async () => {
    const { logger, lines } = capturedLogger();
    await blocker.query(`BEGIN; INSERT INTO ${SCHEMA}.items (id) VALUES (100)`);
    let requestFailed: unknown;
    try {
      const migrating = prepareDatabase(options([IndexNotes1700000000005]), SCHEMA, logger);
      await eventually(
        async () => {
          const { rows } = await traffic.query(
            `SELECT 1 FROM pg_locks WHERE relation = '${SCHEMA}.notes'::regclass
              AND mode = 'AccessExclusiveLock' AND granted`,
          );
          return rows.length > 0;
        },
        20_000,
        10,
      );
      // The request waits for `notes` before the migration waits for `items`: Postgres's deadlock
      // check runs first in the request's session, unless the migration's lock wait ended sooner.
      await blocker.query(`INSERT INTO ${SCHEMA}.notes (id) VALUES (100)`).catch((error: unknown) => {
        requestFailed = error;
      });
      await blocker.query(requestFailed ? 'ROLLBACK' : 'COMMIT');
      await migrating;
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
    }

    expect(requestFailed).toBeUndefined();
    const { rows } = await traffic.query(`SELECT id FROM ${SCHEMA}.notes`);
    expect(rows).toEqual([{ id: 100 }]);
    expect(lines.some((line) => line.includes('lost a lock to live traffic'))).toBe(true);
    const { rows: index } = await traffic.query(`SELECT to_regclass('${SCHEMA}.items_by_id') AS name`);
    expect(index).toEqual([{ name: 'lock_test.items_by_id' }]);
  }, 30_000);

  it('builds an index CONCURRENTLY past a transaction longer than the lock wait bound', async () => {
    const { logger, lines } = capturedLogger();
    await blocker.query(`BEGIN; INSERT INTO ${SCHEMA}.items (id) VALUES (200)`);
    const migrating = prepareDatabase(options([IndexItemsConcurrently1700000000006]), SCHEMA, logger);
    // Longer than any migration's lock_timeout: the build waits for this writer without giving up.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await blocker.query('COMMIT');
    await migrating;

    expect(lines.filter((line) => line.includes('lost a lock'))).toEqual([]);
    const { rows } = await traffic.query(
      `SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = '${SCHEMA}.items_concurrently'::regclass`,
    );
    expect(rows).toEqual([{ valid: true }]);
  }, 30_000);
});

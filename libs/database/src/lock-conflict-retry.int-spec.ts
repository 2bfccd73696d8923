import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { eventually, OwnDatabase } from '@app/testing';
import { postgresOptions } from './data-source-options';
import { retryWhileDatabaseUnavailable } from './failover-retry';

/**
 * A request's transaction that Postgres cancels to break a deadlock (with another request, or
 * with a migration run beside the serving release) is run again, as the services run their
 * commands and reads, and commits: the client is answered, not given a 500.
 */
describe('a transaction Postgres rolls back to break a deadlock', () => {
  const database = new OwnDatabase('lock_conflict');
  const other = new Client({ connectionString: database.url });
  let db: DataSource;

  /** True once another session of this database waits for a lock (asked on `other`, idle then). */
  async function someoneWaits(): Promise<boolean> {
    const { rows } = await other.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows.length > 0;
  }

  beforeAll(async () => {
    await database.create();
    await other.connect();
    db = new DataSource(
      postgresOptions({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 2 }, 'lock-conflict'),
    );
    await db.initialize();
    await db.query(`CREATE TABLE first (id int PRIMARY KEY, n int NOT NULL);
                    CREATE TABLE second (id int PRIMARY KEY, n int NOT NULL);
                    INSERT INTO first VALUES (1, 0); INSERT INTO second VALUES (1, 0)`);
  });
  afterAll(async () => {
    await db.destroy();
    await other.end();
    await database.drop();
  });

  it('is run again once the other transaction has committed, and commits', async () => {
    await other.query('BEGIN; UPDATE second SET n = n + 10 WHERE id = 1');
    let attempts = 0;
    // `first`, then `second`: waits for `other` (first to wait, so the deadlock check cancels it).
    const request = retryWhileDatabaseUnavailable(() => {
      attempts += 1;
      return db.transaction(async (tx) => {
        await tx.query('UPDATE first SET n = n + 1 WHERE id = 1');
        await tx.query('UPDATE second SET n = n + 1 WHERE id = 1');
        return 'answered';
      });
    });
    await eventually(someoneWaits, 10_000, 10);
    // `other` now wants `first`: a cycle, broken after deadlock_timeout by cancelling `request`.
    await other.query('UPDATE first SET n = n + 10 WHERE id = 1');
    await other.query('COMMIT');

    await expect(request).resolves.toBe('answered');
    expect(attempts).toBe(2);
    const { rows } = await other.query(
      'SELECT (SELECT n FROM first) AS first, (SELECT n FROM second) AS second',
    );
    expect(rows).toEqual([{ first: 11, second: 11 }]);
  }, 20_000);
});

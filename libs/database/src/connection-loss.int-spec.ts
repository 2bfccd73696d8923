import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ADMIN_DATABASE_URL, OwnDatabase } from '@app/testing';
import { BoundedClient } from './bounded-client';
import { postgresOptions } from './data-source-options';
import { isConnectionLost } from './database-errors';
import { retryWhileDatabaseUnavailable } from './failover-retry';

/**
 * A Patroni leader's death sends every connection `FATAL 57P01` and closes it, also connections
 * held between two statements. Such a connection must not end the process (pg emits an 'error'
 * event with no query to fail), and the work it was doing must fail as a lost connection, which
 * the services retry on the new leader, not as a bug (a 500).
 */
describe('a connection the server ends between two statements', () => {
  const database = new OwnDatabase('connection_loss');
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  let db: DataSource;

  /** Ends the server side of the connection whose backend pid is `pid`, as a dying leader does. */
  async function endBackend(pid: number): Promise<void> {
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  }

  beforeAll(async () => {
    await admin.connect();
    await database.create();
    db = new DataSource(
      postgresOptions({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 2 }, 'connection-loss'),
    );
    await db.initialize();
    await db.query('CREATE TABLE writes (id int PRIMARY KEY)');
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
    await admin.end();
  });

  it('held by nobody: the client survives, and its next query fails as a lost connection', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const client = new BoundedClient({ connectionString: database.url });
    try {
      await client.connect();
      const ended = new Promise((resolve) => client.once('end', resolve));
      const { rows } = (await client.query('SELECT pg_backend_pid() AS pid')) as {
        rows: Array<{ pid: number }>;
      };
      await endBackend(rows[0].pid);
      await ended;
      const next = await client.query('SELECT 1').catch((error: unknown) => error);
      expect(isConnectionLost(next)).toBe(true);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await client.end().catch(() => undefined);
    }
  });

  it('in a transaction: the next statement fails as a lost connection, and a retry commits once', async () => {
    let attempts = 0;
    const errors: unknown[] = [];
    await retryWhileDatabaseUnavailable(async () => {
      attempts += 1;
      try {
        await db.transaction(async (tx) => {
          await tx.query('INSERT INTO writes (id) VALUES (1)');
          const [{ pid }] = await tx.query<Array<{ pid: number }>>('SELECT pg_backend_pid() AS pid');
          if (attempts === 1) {
            await endBackend(pid);
            // Let the server's FATAL arrive while no statement runs (had it not yet, the next
            // statement meets the closed connection instead: a lost connection all the same).
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          await tx.query('INSERT INTO writes (id) VALUES (2)');
        });
      } catch (error) {
        errors.push(error);
        throw error;
      }
    });

    expect(attempts).toBe(2);
    expect(isConnectionLost(errors[0])).toBe(true);
    const stored = await db.query<Array<{ id: number }>>('SELECT id FROM writes ORDER BY id');
    expect(stored.map((row) => row.id)).toEqual([1, 2]);
  });
});

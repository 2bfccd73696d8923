import { Client } from 'pg';
import { prepareDatabase } from '@app/database';
import { ADMIN_DATABASE_URL, capturedLogger, databaseUrlFor } from '@app/testing';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from '../src/data-source';

/**
 * A database of a test's own (`<run id>_<suffix>`), migrated to the conversations schema, for what
 * the run's shared database would hide (its statistics, its tables' counters). `open()` in
 * beforeAll, `close()` in afterAll drops it.
 */
export function ownConversationsDatabase(suffix: string): {
  db: Client;
  open: () => Promise<void>;
  close: () => Promise<void>;
} {
  const database = `${process.env.TEST_RUN_ID}_${suffix}`;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  const db = new Client({ connectionString: databaseUrlFor(database) });
  return {
    db,
    open: async () => {
      await admin.connect();
      await admin.query(`CREATE DATABASE "${database}"`);
      const options = conversationsDataSourceOptions({
        DATABASE_URL: databaseUrlFor(database),
        DATABASE_POOL_SIZE: 2,
      });
      await prepareDatabase(options, CONVERSATIONS_SCHEMA, capturedLogger().logger);
      await db.connect();
    },
    close: async () => {
      await db.end();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    },
  };
}

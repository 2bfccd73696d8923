import { Client } from 'pg';
import { prepareDatabase } from '@app/database';
import { capturedLogger, OwnDatabase } from '@app/testing';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from '../src/data-source';

/**
 * A database of a test's own (OwnDatabase), migrated to the conversations schema, for what the
 * run's shared database would hide (its statistics, its tables' counters). `open()` in
 * beforeAll, `close()` in afterAll drops it.
 */
export function ownConversationsDatabase(suffix: string): {
  db: Client;
  url: string;
  open: () => Promise<void>;
  close: () => Promise<void>;
} {
  const database = new OwnDatabase(suffix);
  const db = new Client({ connectionString: database.url });
  return {
    db,
    url: database.url,
    open: async () => {
      await database.create();
      const options = conversationsDataSourceOptions({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 2 });
      await prepareDatabase(options, CONVERSATIONS_SCHEMA, capturedLogger().logger);
      await db.connect();
    },
    close: async () => {
      await db.end();
      await database.drop();
    },
  };
}

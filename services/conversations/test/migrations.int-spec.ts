import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { prepareDatabase } from '@app/database';
import { capturedLogger, OwnDatabase } from '@app/testing';
import { SQL } from '../src/conversations/conversations.sql';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from '../src/data-source';
import { ownConversationsDatabase } from './own-database';

/**
 * Replicas starting together (docker compose --scale, start:cluster) all migrate on start: the
 * advisory lock lets one apply each migration and the others find nothing left to do. On a
 * database of its own, so the run's already-migrated one does not hide the race.
 */
describe('migrations with several replicas starting at once', () => {
  const database = new OwnDatabase('migrations');

  beforeAll(database.create);
  afterAll(database.drop);

  it('four at once: every one succeeds and each migration is applied exactly once', async () => {
    const { logger, lines } = capturedLogger();
    const options = conversationsDataSourceOptions({
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: 2,
    });

    await Promise.all(
      Array.from({ length: 4 }, () => prepareDatabase(options, CONVERSATIONS_SCHEMA, logger)),
    );

    const migrations = (options.migrations as Array<{ name: string }>)
      .map((migration) => migration.name)
      .sort();
    const applied = lines
      .filter((line) => line.includes('migration applied'))
      .map((line) => JSON.parse(line).migration);
    expect(applied.sort()).toEqual(migrations);
    const db = new Client({ connectionString: database.url });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT name FROM ${CONVERSATIONS_SCHEMA}.migrations ORDER BY name`);
      expect(rows.map((row) => row.name)).toEqual(migrations);
    } finally {
      await db.end();
    }
  });
});

/**
 * Migration 1764600000000: a message appended within the conversation's 10-minute window changes
 * no indexed value, so Postgres updates the conversation's row in place (HOT) instead of adding an
 * entry to each of its indexes. An index on a column every message changes would undo that.
 */
describe('appending messages to a conversation', () => {
  const { db, open, close } = ownConversationsDatabase('hot_appends');

  beforeAll(open);
  afterAll(close);

  it('updates the conversation in place (HOT), with no index entry, while its window lasts, whatever words a message brings', async () => {
    const conversationId = randomUUID();
    const accountId = randomUUID();
    const window = async () =>
      (await db.query(`SELECT conversations.update_window(clock_timestamp())::text AS at`)).rows[0]
        .at as string;
    const windowBefore = await window();
    await db.query(
      `INSERT INTO conversations.conversations (id, account_id, status, metadata, created_at, updated_at, event_sequence)
       VALUES ($1, $2, 'active', '{}', now(), now(), 1)`,
      [conversationId, accountId],
    );
    const appends = 5;
    for (let i = 0; i < appends; i++) {
      const eventId = randomUUID();
      const { rowCount } = await db.query({
        name: SQL.appendMessages.name,
        text: SQL.appendMessages.text,
        values: [
          [accountId],
          [conversationId],
          [randomUUID()],
          ['visitor'],
          [`new words ${i}: parcel${i} zolw${i}`],
          [eventId],
          ['message.received'],
          [JSON.stringify({ id: eventId, type: 'message.received' })],
          [null],
          [null],
          [null],
        ],
      });
      expect(rowCount).toBe(1);
    }
    // Every message brings words new to the conversation: its search words change, but they are
    // not indexed (the messages' own are). Only the first append after a window that ended
    // meanwhile is a regular update.
    const crossed = (await window()) !== windowBefore;
    await db.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await db.query<{ updates: string; hot: string }>(
      `SELECT n_tup_upd AS updates, n_tup_hot_upd AS hot FROM pg_stat_user_tables
        WHERE schemaname = 'conversations' AND relname = 'conversations'`,
    );
    expect({ updates: Number(rows[0].updates), hot: Number(rows[0].hot) }).toEqual({
      updates: appends,
      hot: crossed ? appends - 1 : appends,
    });
  });
});

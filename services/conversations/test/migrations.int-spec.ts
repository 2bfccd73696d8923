import { Client } from 'pg';
import { prepareDatabase } from '@app/database';
import { ADMIN_DATABASE_URL, capturedLogger, databaseUrlFor } from '@app/testing';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from '../src/data-source';

/**
 * Replicas starting together (docker compose --scale, start:cluster) all migrate on start: the
 * advisory lock lets one apply each migration and the others find nothing left to do. On a
 * database of its own, so the run's already-migrated one does not hide the race.
 */
describe('migrations with several replicas starting at once', () => {
  const database = `${process.env.TEST_RUN_ID}_migrations`;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  });

  it('four at once: every one succeeds and each migration is applied exactly once', async () => {
    const { logger, lines } = capturedLogger();
    const options = conversationsDataSourceOptions({
      DATABASE_URL: databaseUrlFor(database),
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
    const db = new Client({ connectionString: databaseUrlFor(database) });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT name FROM ${CONVERSATIONS_SCHEMA}.migrations ORDER BY name`);
      expect(rows.map((row) => row.name)).toEqual(migrations);
    } finally {
      await db.end();
    }
  });
});

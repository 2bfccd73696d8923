import { Client } from 'pg';
import { ADMIN_DATABASE_URL, databaseUrlFor } from './test-run';

/**
 * A Postgres database of one test file's own, `<run id>_<suffix>`, for what the run's shared
 * database would hide or suffer: its statistics and table counters, migrations from nothing,
 * held locks, killed sessions. `create` in beforeAll; `drop` in afterAll ends any session still
 * on it.
 */
export class OwnDatabase {
  readonly name: string;
  readonly url: string;

  constructor(suffix: string) {
    this.name = `${process.env.TEST_RUN_ID}_${suffix}`;
    this.url = databaseUrlFor(this.name);
  }

  readonly create = (): Promise<void> => asAdmin(`CREATE DATABASE "${this.name}"`);

  readonly drop = (): Promise<void> => asAdmin(`DROP DATABASE IF EXISTS "${this.name}" WITH (FORCE)`);
}

async function asAdmin(statement: string): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

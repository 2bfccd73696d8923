import { Client } from 'pg';
import { ADMIN_DATABASE_URL, deleteVhost } from './test-run';

export default async function globalTeardown(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId || process.env.TEST_KEEP_DATA === 'true') return;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${runId}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  deleteVhost(runId);
}

import { Client } from 'pg';
import { ADMIN_DATABASE_URL, amqpUrlFor, createVhost, databaseUrlFor, newRunId, REDIS_URL } from './test-run';

export default async function globalSetup(): Promise<void> {
  const runId = newRunId();
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${runId}"`);
  } finally {
    await admin.end();
  }
  createVhost(runId);
  Object.assign(process.env, {
    TEST_RUN_ID: runId,
    DATABASE_URL: databaseUrlFor(runId),
    AMQP_URL: amqpUrlFor(runId),
    REDIS_URL,
    REDIS_KEY_PREFIX: `${runId}:`,
  });
}

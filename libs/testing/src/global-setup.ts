import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { ADMIN_DATABASE_URL, amqpUrlFor, databaseUrlFor, newRunId, REDIS_URL } from './test-run';

export default async function globalSetup(): Promise<void> {
  const runId = newRunId();
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${runId}"`);
  } finally {
    await admin.end();
  }
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', runId], { stdio: 'ignore' });
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', runId, 'guest', '.*', '.*', '.*'], {
    stdio: 'ignore',
  });
  Object.assign(process.env, {
    TEST_RUN_ID: runId,
    DATABASE_URL: databaseUrlFor(runId),
    AMQP_URL: amqpUrlFor(runId),
    REDIS_URL,
    REDIS_KEY_PREFIX: `${runId}:`,
  });
}

import { Client } from 'pg';
import { requireExecutable } from './prerequisites';
import {
  ADMIN_DATABASE_URL,
  amqpUrlFor,
  createVhost,
  databaseUrlFor,
  newRunId,
  RABBITMQCTL,
  REDIS_URL,
} from './test-run';

export default async function globalSetup(): Promise<void> {
  requireExecutable(
    RABBITMQCTL,
    'Every test run (it creates a RabbitMQ vhost of its own)',
    'install RabbitMQ with `sudo apt-get install rabbitmq-server`',
  );
  const runId = newRunId();
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL, connectionTimeoutMillis: 5000 });
  await admin.connect().catch((error: Error) => {
    throw new Error(
      `npm test needs PostgreSQL at ${new URL(ADMIN_DATABASE_URL).host} as user postgres without a password ` +
        `(TEST_ADMIN_DATABASE_URL to use another): ${error.message}. Install it with ` +
        '`sudo apt-get install postgresql`, start it, and see README.md, "Prerequisites".',
    );
  });
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

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/**
 * Every test run gets its own Postgres database, RabbitMQ vhost and Redis key prefix, so runs
 * (a developer's and CI's, or two branches) never see each other's data.
 */
export const ADMIN_DATABASE_URL =
  process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const AMQP_BASE_URL = process.env.TEST_AMQP_BASE_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function newRunId(): string {
  return `cms_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

export function databaseUrlFor(runId: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${runId}`;
  return url.toString();
}

/** The run's vhost on the broker, or on every node of a cluster (comma-separated URLs). */
export function amqpUrlFor(runId: string): string {
  return AMQP_BASE_URL.split(',')
    .map((url) => `${url.trim().replace(/\/$/, '')}/${runId}`)
    .join(',');
}

/** The HA testbed points this at its own cluster's rabbitmqctl (scripts/ha/rabbitmqctl.sh). */
export const RABBITMQCTL = process.env.TEST_RABBITMQCTL ?? 'rabbitmqctl';

/** A RabbitMQ virtual host of its own (the guest user may use it), so nobody else's consumers see its queues. */
export function createVhost(name: string): void {
  execFileSync(RABBITMQCTL, ['-q', 'add_vhost', name], { stdio: 'ignore' });
  execFileSync(RABBITMQCTL, ['-q', 'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'], {
    stdio: 'ignore',
  });
}

export function deleteVhost(name: string): void {
  execFileSync(RABBITMQCTL, ['-q', 'delete_vhost', name], { stdio: 'ignore' });
}

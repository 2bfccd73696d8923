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

export function amqpUrlFor(runId: string): string {
  return `${AMQP_BASE_URL.replace(/\/$/, '')}/${runId}`;
}

/** A RabbitMQ virtual host of its own (the guest user may use it), so nobody else's consumers see its queues. */
export function createVhost(name: string): void {
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', name], { stdio: 'ignore' });
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'], {
    stdio: 'ignore',
  });
}

export function deleteVhost(name: string): void {
  execFileSync('rabbitmqctl', ['-q', 'delete_vhost', name], { stdio: 'ignore' });
}

import path from 'node:path';
import { HA_TESTBED } from './testbed';

/** The run's database, vhost and Redis prefix, created on the testbed's clusters instead of the local servers. */
export default async function haGlobalSetup(): Promise<void> {
  Object.assign(process.env, {
    TEST_ADMIN_DATABASE_URL: HA_TESTBED.databaseUrl,
    TEST_AMQP_BASE_URL: HA_TESTBED.amqpUrl,
    TEST_REDIS_URL: 'redis://127.0.0.1',
    TEST_RABBITMQCTL: path.resolve(__dirname, '../rabbitmqctl.sh'),
    REDIS_SENTINELS: HA_TESTBED.sentinels,
    REDIS_SENTINEL_NAME: HA_TESTBED.sentinelName,
  });
  // test-run.ts reads those variables when it is loaded.
  const { default: globalSetup } = await import('../../../libs/testing/src/global-setup');
  await globalSetup();
}

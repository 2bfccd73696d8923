import type { DataSourceOptions } from 'typeorm';
import type { WebhooksConfig } from '@app/config';
import { postgresOptions } from '@app/database';
import { WebhooksSchema1764100000000 } from './migrations/1764100000000-webhooks-schema';

export const WEBHOOKS_SCHEMA = 'webhooks';

/** The webhooks service's own schema; its repositories speak SQL, so it maps no entities. */
export function webhooksDataSourceOptions(
  config: Pick<WebhooksConfig, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'>,
): DataSourceOptions {
  return {
    ...postgresOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE, 'webhooks'),
    schema: WEBHOOKS_SCHEMA,
    migrationsTableName: 'migrations',
    entities: [],
    migrations: [WebhooksSchema1764100000000],
  } as DataSourceOptions;
}

import type { DataSourceOptions } from 'typeorm';
import type { GatewayConfig } from '@app/config';
import { postgresOptions } from '@app/database';
import { AccountEntity } from './accounts/account.entity';
import { ApiKeyEntity } from './accounts/api-key.entity';
import { IdempotencyKeyEntity } from './idempotency/idempotency-key.entity';
import { AccountsAndKeys1763856000001 } from './migrations/1763856000001-accounts-and-keys';

export const GATEWAY_SCHEMA = 'gateway';

export function gatewayDataSourceOptions(
  config: Pick<GatewayConfig, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'>,
): DataSourceOptions {
  return {
    ...postgresOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE, 'gateway'),
    schema: GATEWAY_SCHEMA,
    migrationsTableName: 'migrations',
    entities: [AccountEntity, ApiKeyEntity, IdempotencyKeyEntity],
    migrations: [AccountsAndKeys1763856000001],
  } as DataSourceOptions;
}

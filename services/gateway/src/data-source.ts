import type { DataSourceOptions } from 'typeorm';
import { DatabaseSettings, postgresOptions } from '@app/database';
import { AccountEntity } from './accounts/account.entity';
import { ApiKeyEntity } from './accounts/api-key.entity';
import { IdempotencyKeyEntity } from './idempotency/idempotency-key.entity';
import { AccountsAndKeys1763856000001 } from './migrations/1763856000001-accounts-and-keys';
import { IdempotencyClaimLeases1764200000000 } from './migrations/1764200000000-idempotency-claim-leases';

export const GATEWAY_SCHEMA = 'gateway';

export function gatewayDataSourceOptions(config: DatabaseSettings): DataSourceOptions {
  return {
    ...postgresOptions(config, 'gateway'),
    schema: GATEWAY_SCHEMA,
    migrationsTableName: 'migrations',
    entities: [AccountEntity, ApiKeyEntity, IdempotencyKeyEntity],
    migrations: [AccountsAndKeys1763856000001, IdempotencyClaimLeases1764200000000],
  } as DataSourceOptions;
}

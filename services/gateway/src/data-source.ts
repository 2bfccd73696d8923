import type { DataSourceOptions } from 'typeorm';
import { DatabaseSettings, postgresOptions } from '@app/database';
import { AccountsAndKeys1763856000001 } from './migrations/1763856000001-accounts-and-keys';
import { IdempotencyClaimLeases1764200000000 } from './migrations/1764200000000-idempotency-claim-leases';
import { KeyScopes1765300000001 } from './migrations/1765300000001-key-scopes';
import { CursorKeys1766700000000 } from './migrations/1766700000000-cursor-keys';

export const GATEWAY_SCHEMA = 'gateway';

export function gatewayDataSourceOptions(config: DatabaseSettings): DataSourceOptions {
  return {
    ...postgresOptions(config, 'gateway'),
    schema: GATEWAY_SCHEMA,
    migrationsTableName: 'migrations',
    // No entities: every query is SQL through libs/database's typed statements; TypeORM runs the
    // migrations, the connections and the transactions.
    entities: [],
    migrations: [
      AccountsAndKeys1763856000001,
      IdempotencyClaimLeases1764200000000,
      KeyScopes1765300000001,
      CursorKeys1766700000000,
    ],
  } as DataSourceOptions;
}

import type { DataSourceOptions } from 'typeorm';
import { DatabaseSettings, postgresOptions } from '@app/database';
import { WebhooksSchema1764100000000 } from './migrations/1764100000000-webhooks-schema';
import { CommandPayloads1764200000001 } from './migrations/1764200000001-command-payloads';
import { EventOrder1764400000000 } from './migrations/1764400000000-event-order';

export const WEBHOOKS_SCHEMA = 'webhooks';

/** The webhooks service's own schema; its repositories speak SQL, so it maps no entities. */
export function webhooksDataSourceOptions(config: DatabaseSettings): DataSourceOptions {
  return {
    ...postgresOptions(config, 'webhooks'),
    schema: WEBHOOKS_SCHEMA,
    migrationsTableName: 'migrations',
    // No entities: every query is SQL through libs/database's typed statements; TypeORM runs the
    // migrations, the connections and the transactions.
    entities: [],
    migrations: [WebhooksSchema1764100000000, CommandPayloads1764200000001, EventOrder1764400000000],
  } as DataSourceOptions;
}

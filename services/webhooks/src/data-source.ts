import type { DataSourceOptions } from 'typeorm';
import type { SecretsSettings } from '@app/config';
import { DatabaseSettings, postgresOptions } from '@app/database';
import { WebhooksSchema1764100000000 } from './migrations/1764100000000-webhooks-schema';
import { CommandPayloads1764200000001 } from './migrations/1764200000001-command-payloads';
import { EventOrder1764400000000 } from './migrations/1764400000000-event-order';
import { DeliveryOrder1765000000000 } from './migrations/1765000000000-delivery-order';
import { encryptedSecretsMigration } from './migrations/1765300000000-encrypted-secrets';
import { SecretCipher, secretsKeyring } from './secrets/secret-cipher';
import { EventTraceContext1765500000000 } from './migrations/1765500000000-event-trace-context';
import { ConversationErasure1766300000001 } from './migrations/1766300000001-conversation-erasure';

export const WEBHOOKS_SCHEMA = 'webhooks';

/** The webhooks service's own schema; its repositories speak SQL, so it maps no entities. */
export function webhooksDataSourceOptions(config: DatabaseSettings & SecretsSettings): DataSourceOptions {
  return {
    ...postgresOptions(config, 'webhooks'),
    schema: WEBHOOKS_SCHEMA,
    migrationsTableName: 'migrations',
    // No entities: every query is SQL through libs/database's typed statements; TypeORM runs the
    // migrations, the connections and the transactions.
    entities: [],
    migrations: [
      WebhooksSchema1764100000000,
      CommandPayloads1764200000001,
      EventOrder1764400000000,
      DeliveryOrder1765000000000,
      encryptedSecretsMigration(new SecretCipher(secretsKeyring(config.SECRETS_ENCRYPTION_KEYS).keys)),
      EventTraceContext1765500000000,
      ConversationErasure1766300000001,
    ],
  } as DataSourceOptions;
}

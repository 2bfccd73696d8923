import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import {
  databaseSchema,
  loadConfig,
  redisSchema,
  requireSecretsKeysInProduction,
  secretsSchema,
} from '@app/config';
import { createLogger } from '@app/observability';
import { AccountChange, announceAccountChange } from '../services/gateway/src/accounts/account-changes';
import { AccountsRepository } from '../services/gateway/src/accounts/accounts.repository';
import { gatewayDataSourceOptions } from '../services/gateway/src/data-source';
import { migrateGateway } from '../services/gateway/src/gateway-service';
import { ReencryptionProgress, reencryptSecrets } from '../services/webhooks/src/secrets/reencrypt-secrets';
import { SecretCipher, secretsKeyring } from '../services/webhooks/src/secrets/secret-cipher';

/** Where the CLI writes: JSON on stdout, everything else on stderr. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What a command works with. */
export interface CommandContext {
  accounts: AccountsRepository;
  print: (value: unknown) => void;
  announce: (change: AccountChange) => Promise<void>;
  /** Re-encrypts the webhooks service's signing secrets with the first configured key. */
  reencryptSecrets: () => Promise<ReencryptionProgress>;
}

/**
 * Runs one command against the accounts: the configuration from `env`, the gateway's schema
 * migrated, a small connection pool closed afterwards. Kept apart from cli.ts, which loads it
 * only for a command, so that `cms --help` loads neither TypeORM nor the gateway.
 */
export async function withCommandContext(
  env: NodeJS.ProcessEnv,
  output: CliOutput,
  command: (context: CommandContext) => Promise<void>,
): Promise<void> {
  const config = loadConfig(
    {
      ...databaseSchema,
      ...redisSchema,
      LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug']).default('warn'),
    },
    env,
  );
  const logger = createLogger('cli', config.LOG_LEVEL);
  await migrateGateway(config, logger);
  const db = new DataSource(gatewayDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }));
  await db.initialize();
  try {
    await command({
      accounts: new AccountsRepository(db),
      print: (value) => output.stdout(`${JSON.stringify(value)}\n`),
      // Tell running gateways at once; if Redis is unreachable their caches expire within seconds.
      announce: (change) =>
        announceAccountChange(config, config.REDIS_KEY_PREFIX, change).catch((error: Error) =>
          output.stderr(
            `warning: gateways not notified (${error.message}); the change applies within AUTH_CACHE_TTL_MS\n`,
          ),
        ),
      reencryptSecrets: () => {
        const { SECRETS_ENCRYPTION_KEYS } = requireSecretsKeysInProduction(loadConfig(secretsSchema, env));
        const cipher = new SecretCipher(secretsKeyring(SECRETS_ENCRYPTION_KEYS).keys);
        return reencryptSecrets(db, cipher, (progress) =>
          output.stderr(`re-encrypted so far: ${JSON.stringify(progress)}\n`),
        );
      },
    });
  } finally {
    await db.destroy();
  }
}

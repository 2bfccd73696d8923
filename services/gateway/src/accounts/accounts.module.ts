import { Inject, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import type { GatewayConfig } from '@app/config';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { ApiKeyMetrics } from '../auth/api-key-metrics';
import { GATEWAY_LOGGER, REDIS_SUBSCRIBER } from '../core/tokens';
import { GATEWAY_CONFIG } from '../gateway-config.token';
import { subscribeToAccountChanges } from './account-changes';
import { AccountsRepository } from './accounts.repository';

/** Forgets cached keys of accounts the CLI changed on any replica (Redis pub/sub). */
@Injectable()
export class AccountChangesSubscription implements OnApplicationBootstrap {
  constructor(
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
    private readonly apiKeys: ApiKeyAuthenticator,
  ) {}

  onApplicationBootstrap(): void {
    subscribeToAccountChanges(
      this.subscriber,
      this.config.REDIS_KEY_PREFIX,
      (change) => this.apiKeys.forget(change),
      this.logger,
    );
  }
}

/** Accounts, their API keys and the authentication that checks them. */
@Module({
  providers: [
    {
      provide: AccountsRepository,
      inject: [getDataSourceToken()],
      useFactory: (db: DataSource) => new AccountsRepository(db),
    },
    {
      provide: ApiKeyAuthenticator,
      inject: [AccountsRepository, GATEWAY_CONFIG, Registry],
      useFactory: (accounts: AccountsRepository, config: GatewayConfig, registry: Registry) =>
        new ApiKeyAuthenticator(accounts, config.AUTH_CACHE_TTL_MS, new ApiKeyMetrics(registry)),
    },
    AccountChangesSubscription,
  ],
  exports: [AccountsRepository, ApiKeyAuthenticator],
})
export class AccountsModule {}

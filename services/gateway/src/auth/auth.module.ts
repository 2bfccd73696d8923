import { Inject, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { subscribeToAccountChanges } from '../accounts/account-changes';
import { AccountsModule } from '../accounts/accounts.module';
import { AccountsRepository } from '../accounts/accounts.repository';
import { GATEWAY_CONFIG, GATEWAY_LOGGER, REDIS, REDIS_SUBSCRIBER } from '../core/tokens';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyMetrics } from './api-key-metrics';
import { StreamTokens } from './stream-tokens';

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

/** The authentication of API keys against the accounts, with its cache and what empties it; stream tokens. */
@Module({
  imports: [AccountsModule],
  providers: [
    {
      provide: ApiKeyAuthenticator,
      inject: [AccountsRepository, GATEWAY_CONFIG, Registry],
      useFactory: (accounts: AccountsRepository, config: GatewayConfig, registry: Registry) =>
        new ApiKeyAuthenticator(accounts, config.AUTH_CACHE_TTL_MS, new ApiKeyMetrics(registry)),
    },
    {
      provide: StreamTokens,
      inject: [REDIS, GATEWAY_CONFIG],
      useFactory: (redis: Redis, config: GatewayConfig) => new StreamTokens(redis, config.REDIS_KEY_PREFIX),
    },
    AccountChangesSubscription,
  ],
  exports: [ApiKeyAuthenticator, StreamTokens],
})
export class AuthModule {}

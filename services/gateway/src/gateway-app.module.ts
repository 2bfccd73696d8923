import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type Redis from 'ioredis';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import {
  CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
  CONVERSATIONS_RPC_QUEUE,
  WEBHOOKS_RPC_PRESENCE_EXCHANGE,
  WEBHOOKS_RPC_QUEUE,
} from '@app/contracts';
import { RpcClient, RpcClientMetrics } from '@app/messaging';
import { OPS_CONTROLLERS, OPS_TERMINUS } from '@app/observability';
import { AccountsRepository } from './accounts/accounts.repository';
import { AnalyticsController } from './analytics/analytics.controller';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator';
import { ApiKeyMetrics } from './auth/api-key-metrics';
import { ConversationsController } from './conversations/conversations.controller';
import { gatewayDataSourceOptions } from './data-source';
import { GATEWAY_CONFIG } from './gateway-config.token';
import { gatewayReadiness } from './health/gateway-readiness';
import { EventsController } from './events/events.controller';
import { StreamHub } from './events/stream-hub';
import { StreamSlots } from './events/stream-slots';
import { DrainState } from './http/connection-drain';
import { IdempotencyHooks } from './idempotency/idempotency-hooks';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { IdempotencyRetentionJob } from './idempotency/idempotency-retention.job';
import { RateLimitMetrics } from './rate-limit/rate-limit-metrics';
import { RateLimits } from './rate-limit/rate-limits';
import { REDIS } from './rate-limit/redis-connection';
import { WEBHOOKS_RPC } from './webhooks/webhooks-rpc.token';
import { WebhooksController } from './webhooks/webhooks.controller';

/**
 * An unfinished Idempotency-Key claim is taken over this long after the RPC timeout: its request
 * can no longer be waiting for a reply by then.
 */
const IDEMPOTENCY_LEASE_MARGIN_MS = 1000;

@Module({})
export class GatewayAppModule {
  static register(
    config: GatewayConfig,
    amqp: AmqpConnectionManager,
    redis: Redis,
    logger: Logger,
    registry: Registry,
  ): DynamicModule {
    const rpcMetrics = new RpcClientMetrics(registry);
    return {
      module: GatewayAppModule,
      imports: [TypeOrmModule.forRoot(gatewayDataSourceOptions(config)), OPS_TERMINUS],
      controllers: [
        ConversationsController,
        AnalyticsController,
        WebhooksController,
        EventsController,
        ...OPS_CONTROLLERS,
      ],
      providers: [
        {
          provide: RpcClient,
          useFactory: () =>
            new RpcClient({
              connection: amqp,
              queue: CONVERSATIONS_RPC_QUEUE,
              presenceExchange: CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
              timeoutMs: config.RPC_TIMEOUT_MS,
              metrics: rpcMetrics,
            }),
        },
        {
          provide: AccountsRepository,
          inject: [getDataSourceToken()],
          useFactory: (db: DataSource) => new AccountsRepository(db),
        },
        {
          provide: ApiKeyAuthenticator,
          inject: [AccountsRepository],
          useFactory: (accounts: AccountsRepository) =>
            new ApiKeyAuthenticator(accounts, config.AUTH_CACHE_TTL_MS, new ApiKeyMetrics(registry)),
        },
        {
          provide: IdempotencyRepository,
          inject: [getDataSourceToken()],
          useFactory: (db: DataSource) =>
            new IdempotencyRepository(
              db,
              config.IDEMPOTENCY_TTL_HOURS,
              config.RPC_TIMEOUT_MS + IDEMPOTENCY_LEASE_MARGIN_MS,
            ),
        },
        {
          provide: IdempotencyHooks,
          inject: [IdempotencyRepository],
          useFactory: (keys: IdempotencyRepository) => new IdempotencyHooks(keys, logger),
        },
        {
          provide: IdempotencyRetentionJob,
          inject: [IdempotencyRepository],
          useFactory: (keys: IdempotencyRepository) => new IdempotencyRetentionJob(keys, logger),
        },
        { provide: REDIS, useValue: redis },
        { provide: GATEWAY_CONFIG, useValue: config },
        {
          provide: RateLimits,
          useFactory: () => new RateLimits(redis, config, logger, new RateLimitMetrics(registry)),
        },
        { provide: Registry, useValue: registry },
        {
          provide: StreamHub,
          inject: [RpcClient],
          useFactory: (rpc: RpcClient) =>
            new StreamHub(
              amqp,
              rpc,
              new StreamSlots(redis, config.REDIS_KEY_PREFIX, config.STREAMS_PER_ACCOUNT),
              config,
              logger,
            ),
        },
        DrainState,
        gatewayReadiness,
        {
          provide: WEBHOOKS_RPC,
          useFactory: () =>
            new RpcClient({
              connection: amqp,
              queue: WEBHOOKS_RPC_QUEUE,
              presenceExchange: WEBHOOKS_RPC_PRESENCE_EXCHANGE,
              timeoutMs: config.RPC_TIMEOUT_MS,
              serviceName: 'webhooks',
              metrics: rpcMetrics,
            }),
        },
      ],
    };
  }
}

import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { connectAmqp } from '@app/messaging';
import { openRedis } from './core/redis-endpoint';
import { AMQP_CONNECTION, GATEWAY_CONFIG, GATEWAY_LOGGER, REDIS, REDIS_SUBSCRIBER } from './core/tokens';
import { gatewayDataSourceOptions } from './data-source';
import { DrainState } from './http/connection-drain';
import { connectRedis } from './rate-limit/redis-connection';

/**
 * What every feature module of the gateway shares: the configuration, the logger, the metrics
 * registry and the connections (the Postgres pool through TypeORM, RabbitMQ, Redis for the
 * limiter and Redis for account-change messages). Global, so Nest shuts it down after the feature
 * modules: their RPC clients and jobs stop first, then the connections close (`app.close()`).
 */
@Module({})
export class GatewayCoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(AMQP_CONNECTION) private readonly amqp: AmqpConnectionManager,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
  ) {}

  static forRoot(config: GatewayConfig, logger: Logger, registry: Registry): DynamicModule {
    return {
      module: GatewayCoreModule,
      global: true,
      imports: [TypeOrmModule.forRoot(gatewayDataSourceOptions(config))],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: GATEWAY_LOGGER, useValue: logger },
        { provide: Registry, useValue: registry },
        { provide: AMQP_CONNECTION, useFactory: () => connectAmqp(config.AMQP_URL, 'gateway', logger) },
        { provide: REDIS, useFactory: () => logErrors(connectRedis(config), logger) },
        {
          provide: REDIS_SUBSCRIBER,
          // No ready check (INFO) on the subscriber: after a reconnect it is already in subscriber mode.
          useFactory: () =>
            logErrors(openRedis(config, { maxRetriesPerRequest: null, enableReadyCheck: false }), logger),
        },
        DrainState,
      ],
      exports: [
        GATEWAY_CONFIG,
        GATEWAY_LOGGER,
        Registry,
        AMQP_CONNECTION,
        REDIS,
        REDIS_SUBSCRIBER,
        DrainState,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.amqp.close();
    this.redis.disconnect();
    this.subscriber.disconnect();
  }
}

function logErrors(client: Redis, logger: Logger): Redis {
  client.on('error', (error: Error) => logger.debug({ err: error.message }, 'redis connection error'));
  return client;
}

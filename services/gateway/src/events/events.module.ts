import { Inject, Module, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { RpcClient } from '@app/messaging';
import { AMQP_CONNECTION, GATEWAY_LOGGER } from '../core/tokens';
import { RpcModule } from '../core/rpc.module';
import { GATEWAY_CONFIG } from '../gateway-config.token';
import { REDIS } from '../rate-limit/redis-connection';
import { EventsController } from './events.controller';
import { StreamHub } from './stream-hub';
import { StreamSlots } from './stream-slots';

/**
 * The account's events: the events API (answered by the conversations service) and the live
 * stream. The stream feed starts consuming before the gateway listens (bootstrap) and its streams
 * end first when the app closes (module destroy, before the HTTP server closes: an open stream
 * would otherwise hold the close until its client left).
 */
@Module({
  imports: [RpcModule],
  controllers: [EventsController],
  providers: [
    {
      provide: StreamHub,
      inject: [AMQP_CONNECTION, RpcClient, REDIS, GATEWAY_CONFIG, GATEWAY_LOGGER, Registry],
      useFactory: (
        amqp: AmqpConnectionManager,
        rpc: RpcClient,
        redis: Redis,
        config: GatewayConfig,
        logger: Logger,
        registry: Registry,
      ) =>
        new StreamHub(
          amqp,
          rpc,
          new StreamSlots(redis, config.REDIS_KEY_PREFIX, config.STREAMS_PER_ACCOUNT),
          config,
          logger,
          registry,
        ),
    },
  ],
})
export class EventsModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(StreamHub) private readonly streams: StreamHub) {}

  onApplicationBootstrap(): Promise<void> {
    return this.streams.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.streams.stop();
  }
}

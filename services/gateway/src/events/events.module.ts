import { Inject, Module, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { RpcClient } from '@app/messaging';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { AuthModule } from '../auth/auth.module';
import { RpcModule } from '../core/rpc.module';
import { subscribeToAccountChanges } from '../accounts/account-changes';
import { AMQP_CONNECTION, GATEWAY_CONFIG, GATEWAY_LOGGER, REDIS, REDIS_SUBSCRIBER } from '../core/tokens';
import { EventsController } from './events.controller';
import { StreamHub } from './stream-hub';
import { StreamSlots } from './stream-slots';

/**
 * The account's events: the events API (answered by the conversations service) and the live
 * stream. The stream feed starts consuming before the gateway listens (bootstrap) and its streams
 * end first when the app closes (module destroy, before the HTTP server closes: an open stream
 * would otherwise hold the close until its client left). A change to a key or an account that
 * the CLI announces ends the streams it concerns; one whose announcement was missed, at the next
 * renewal of the stream slots (StreamHub.recheckKeys).
 */
@Module({
  imports: [RpcModule, AuthModule],
  controllers: [EventsController],
  providers: [
    {
      provide: StreamHub,
      inject: [
        AMQP_CONNECTION,
        RpcClient,
        REDIS,
        ApiKeyAuthenticator,
        GATEWAY_CONFIG,
        GATEWAY_LOGGER,
        Registry,
      ],
      useFactory: (
        amqp: AmqpConnectionManager,
        rpc: RpcClient,
        redis: Redis,
        keys: ApiKeyAuthenticator,
        config: GatewayConfig,
        logger: Logger,
        registry: Registry,
      ) =>
        new StreamHub(
          amqp,
          rpc,
          new StreamSlots(redis, config.REDIS_KEY_PREFIX, config.STREAMS_PER_ACCOUNT),
          keys,
          config,
          logger,
          registry,
        ),
    },
  ],
})
export class EventsModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(StreamHub) private readonly streams: StreamHub,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    // A revoked key, or a plan change, ends the streams concerned on every gateway at once
    // (docs/events.md, "Live stream"), as it ends the key's use for new requests.
    subscribeToAccountChanges(
      this.subscriber,
      this.config.REDIS_KEY_PREFIX,
      (change) => this.streams.endStreamsOf(change),
      this.logger,
    );
    return this.streams.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.streams.stop();
  }
}

import { type FactoryProvider, Module } from '@nestjs/common';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import {
  CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
  CONVERSATIONS_RPC_QUEUE,
  WEBHOOKS_RPC_PRESENCE_EXCHANGE,
  WEBHOOKS_RPC_QUEUE,
} from '@app/contracts';
import { RpcClient, RpcClientMetrics, rpcQueueType } from '@app/messaging';
import { AMQP_CONNECTION, GATEWAY_CONFIG, WEBHOOKS_RPC } from './tokens';

/** The client of one service's RPC queue, for the gateway's timeout and metrics. */
const rpcClient = (
  provide: typeof RpcClient | symbol,
  queue: { queue: string; presenceExchange: string; serviceName?: string },
): FactoryProvider<RpcClient> => ({
  provide,
  inject: [AMQP_CONNECTION, GATEWAY_CONFIG, RpcClientMetrics],
  useFactory: (amqp: AmqpConnectionManager, config: GatewayConfig, metrics: RpcClientMetrics) =>
    new RpcClient({
      connection: amqp,
      ...queue,
      queueType: rpcQueueType(config),
      timeoutMs: config.RPC_TIMEOUT_MS,
      metrics,
    }),
});

/**
 * The RPC senders: one generic, typed client class (an operation of @app/contracts names its
 * pattern, command and reply types) per queue: `RpcClient` for the conversations service (which
 * also answers analytics), `WEBHOOKS_RPC` for the webhooks service. Each closes with the app.
 */
@Module({
  providers: [
    {
      provide: RpcClientMetrics,
      inject: [Registry],
      useFactory: (registry: Registry) => new RpcClientMetrics(registry),
    },
    rpcClient(RpcClient, {
      queue: CONVERSATIONS_RPC_QUEUE,
      presenceExchange: CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
    }),
    rpcClient(WEBHOOKS_RPC, {
      queue: WEBHOOKS_RPC_QUEUE,
      presenceExchange: WEBHOOKS_RPC_PRESENCE_EXCHANGE,
      serviceName: 'webhooks',
    }),
  ],
  exports: [RpcClient, WEBHOOKS_RPC],
})
export class RpcModule {}

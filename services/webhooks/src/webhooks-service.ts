import type { Logger } from 'pino';
import type { WebhooksConfig } from '@app/config';
import {
  WEBHOOKS_RPC_DEAD_LETTER_QUEUE,
  WEBHOOKS_RPC_PRESENCE_EXCHANGE,
  WEBHOOKS_RPC_QUEUE,
  WebhookRpc,
} from '@app/contracts';
import { RunningRpcService, startRpcService } from '@app/runtime';
import { Dispatcher } from './delivery/dispatcher';
import { TargetPolicy } from './delivery/target-policy';
import { WebhookSender } from './delivery/webhook-sender';
import { EVENT_QUEUE_DECLARATIONS, EventConsumer } from './fan-out/event-consumer';
import { webhooksDataSourceOptions, WEBHOOKS_SCHEMA } from './data-source';
import { WebhooksAppModule } from './webhooks-app.module';

export type RunningWebhooksService = RunningRpcService;

export interface WebhooksServiceOptions {
  /** Replaces the SSRF policy (tests: a resolver that answers what they need). */
  targets?: TargetPolicy;
}

/**
 * Migrates its schema, then serves the subscriptions API on `webhooks.rpc`, fans events from
 * `conversations.events` out into deliveries, and sends them, until close() is called.
 */
export function startWebhooksService(
  config: WebhooksConfig,
  logger: Logger,
  options: WebhooksServiceOptions = {},
): Promise<RunningWebhooksService> {
  return startRpcService({
    name: 'webhooks',
    config,
    logger,
    schema: WEBHOOKS_SCHEMA,
    migrations: webhooksDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }),
    otherQueues: EVENT_QUEUE_DECLARATIONS,
    queues: {
      queue: WEBHOOKS_RPC_QUEUE,
      deadLetterQueue: WEBHOOKS_RPC_DEAD_LETTER_QUEUE,
      presenceExchange: WEBHOOKS_RPC_PRESENCE_EXCHANGE,
    },
    operations: [WebhookRpc],
    module: (amqp, registry) => WebhooksAppModule.register(config, logger, amqp, registry, options.targets),
    background: (app) => {
      const consumer = app.get(EventConsumer);
      const dispatcher = app.get(Dispatcher);
      return {
        async start() {
          await dispatcher.start();
          await consumer.start();
        },
        async stop() {
          // Events first (the fan-out hands work to the dispatcher), then deliveries in flight.
          await consumer.stop();
          await dispatcher.stop();
          await app.get(WebhookSender).close();
        },
      };
    },
    readyDetails: {
      retry_schedule: config.WEBHOOK_RETRY_SCHEDULE,
      allow_private_targets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      concurrency_per_endpoint: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    },
  });
}

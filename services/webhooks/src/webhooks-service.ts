import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '@app/config';
import {
  WEBHOOKS_RPC_DEAD_LETTER_QUEUE,
  WEBHOOKS_RPC_PRESENCE_EXCHANGE,
  WEBHOOKS_RPC_QUEUE,
} from '@app/contracts';
import { prepareDatabase } from '@app/database';
import { connectAmqp, PassThroughRpcFilter, RpcServer, RpcServerMetrics } from '@app/messaging';
import {
  createMetricsRegistry,
  PinoNestLogger,
  postgresCheck,
  rabbitmqCheck,
  startOpsServer,
} from '@app/observability';
import { Dispatcher } from './delivery/dispatcher';
import { TargetPolicy } from './delivery/target-policy';
import { WebhookSender } from './delivery/webhook-sender';
import { EventConsumer } from './fan-out/event-consumer';
import { webhooksDataSourceOptions, WEBHOOKS_SCHEMA } from './data-source';
import { WebhooksAppModule } from './webhooks-app.module';

export interface RunningWebhooksService {
  app: INestMicroservice;
  /** The ops server: /health/live, /health/ready, /metrics. */
  opsUrl: string;
  close(): Promise<void>;
}

export interface WebhooksServiceOptions {
  /** Replaces the SSRF policy (tests: a resolver that answers what they need). */
  targets?: TargetPolicy;
}

/**
 * Migrates its schema, then serves the subscriptions API on `webhooks.rpc`, fans events from
 * `conversations.events` out into deliveries, and sends them, until close() is called.
 */
export async function startWebhooksService(
  config: WebhooksConfig,
  logger: Logger,
  options: WebhooksServiceOptions = {},
): Promise<RunningWebhooksService> {
  if (config.RUN_MIGRATIONS) {
    await prepareDatabase(
      webhooksDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }),
      WEBHOOKS_SCHEMA,
      logger,
    );
  }
  const amqp = connectAmqp(config.AMQP_URL, 'webhooks', logger);
  const registry = createMetricsRegistry();
  const app = await NestFactory.createMicroservice(
    WebhooksAppModule.register(config, logger, amqp, registry, options.targets),
    {
      strategy: new RpcServer({
        connection: amqp,
        queue: WEBHOOKS_RPC_QUEUE,
        deadLetterQueue: WEBHOOKS_RPC_DEAD_LETTER_QUEUE,
        presenceExchange: WEBHOOKS_RPC_PRESENCE_EXCHANGE,
        prefetch: config.AMQP_PREFETCH,
        logger,
        metrics: new RpcServerMetrics(registry),
      }),
      logger: new PinoNestLogger(logger),
    },
  );
  app.useGlobalFilters(new PassThroughRpcFilter());
  await app.listen();
  const dispatcher = app.get(Dispatcher);
  const consumer = app.get(EventConsumer);
  await dispatcher.start();
  await consumer.start();
  const ops = await startOpsServer({
    config,
    registry,
    readiness: [postgresCheck(app.get(DataSource)), rabbitmqCheck(() => amqp.isConnected())],
    logger,
  });
  logger.info(
    {
      retry_schedule: config.WEBHOOK_RETRY_SCHEDULE,
      allow_private_targets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      concurrency_per_endpoint: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    },
    'webhooks service ready',
  );
  return {
    app,
    opsUrl: ops.url,
    async close() {
      await ops.close();
      // Events first (the fan-out hands work to the dispatcher), then deliveries in flight.
      await consumer.stop();
      await dispatcher.stop();
      await app.close();
      await app.get(WebhookSender).close();
      await amqp.close();
    },
  };
}

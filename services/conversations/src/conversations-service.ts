import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { ConversationsConfig } from '@app/config';
import {
  CONVERSATIONS_RPC_DEAD_LETTER_QUEUE,
  CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
  CONVERSATIONS_RPC_QUEUE,
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
import { ConversationsAppModule } from './conversations-app.module';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from './data-source';

export interface RunningConversationsService {
  app: INestMicroservice;
  /** The ops server: /health/live, /health/ready, /metrics. */
  opsUrl: string;
  close(): Promise<void>;
}

/** Migrates, then serves RPC commands and relays the outbox until close() is called. */
export async function startConversationsService(
  config: ConversationsConfig,
  logger: Logger,
): Promise<RunningConversationsService> {
  if (config.RUN_MIGRATIONS) {
    await prepareDatabase(
      conversationsDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }),
      CONVERSATIONS_SCHEMA,
      logger,
    );
  }
  const amqp = connectAmqp(config.AMQP_URL, 'conversations', logger);
  const registry = createMetricsRegistry();
  const app = await NestFactory.createMicroservice(
    ConversationsAppModule.register(config, logger, amqp, registry),
    {
      strategy: new RpcServer({
        connection: amqp,
        queue: CONVERSATIONS_RPC_QUEUE,
        deadLetterQueue: CONVERSATIONS_RPC_DEAD_LETTER_QUEUE,
        presenceExchange: CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
        prefetch: config.AMQP_PREFETCH,
        logger,
        metrics: new RpcServerMetrics(registry),
      }),
      logger: new PinoNestLogger(logger),
    },
  );
  app.useGlobalFilters(new PassThroughRpcFilter());
  await app.listen();
  const ops = await startOpsServer({
    config,
    registry,
    readiness: [postgresCheck(app.get(DataSource)), rabbitmqCheck(() => amqp.isConnected())],
    logger,
  });
  logger.info('conversations service ready');
  return {
    app,
    opsUrl: ops.url,
    async close() {
      await ops.close();
      await app.close();
      await amqp.close();
    },
  };
}

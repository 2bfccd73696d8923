import type { DynamicModule, INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { DataSource, DataSourceOptions } from 'typeorm';
import type { RpcOperation } from '@app/contracts';
import {
  databaseUnavailable,
  isDatabaseUnavailable,
  prepareDatabase,
  retryWhileDatabaseUnavailable,
} from '@app/database';
import {
  createMetricsRegistry,
  PinoNestLogger,
  postgresCheck,
  rabbitmqCheck,
  startOpsServer,
} from '@app/observability';
import {
  connectAmqp,
  declareQueues,
  DirectReplies,
  PassThroughRpcFilter,
  type QueueDeclaration,
  RpcServer,
  RpcServerMetrics,
  rpcQueueDeclarations,
  type RpcFailurePolicy,
  rpcQueueType,
  type RpcQueueType,
} from '@app/messaging';

interface RpcServiceConfig {
  RUN_MIGRATIONS: boolean;
  AMQP_URL: string;
  AMQP_PREFETCH: number;
  RPC_QUEUE_TYPE: RpcQueueType | 'auto';
  OPS_HOST: string;
  OPS_PORT: number;
}

/** Work a service runs beside its RPC queue (a relay, a consumer): started once it listens, stopped first. */
export interface BackgroundWork {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface RpcServiceDefinition {
  /** `conversations`, `webhooks`: names the AMQP connection and the "<name> service ready" line. */
  name: string;
  config: RpcServiceConfig;
  logger: Logger;
  /** The service's own schema and the data source options that carry its migrations. */
  schema: string;
  migrations: DataSourceOptions;
  queues: { queue: string; deadLetterQueue: string; presenceExchange: string };
  /** Further queues the service owns (declared, and migrated if need be, before it starts). */
  otherQueues?: QueueDeclaration[];
  /** Every operation the service answers, by group (`[ConversationRpc, AnalyticsRpc]`). */
  operations: Array<Record<string, RpcOperation>>;
  module: (amqp: AmqpConnectionManager, registry: Registry) => DynamicModule;
  background?: (app: INestMicroservice) => BackgroundWork;
  /** Settings worth a look in the ready line. */
  readyDetails?: Record<string, unknown>;
}

export interface RunningRpcService {
  app: INestMicroservice;
  /** The ops server: /health/live, /health/ready, /metrics. */
  opsUrl: string;
  close(): Promise<void>;
}

/**
 * The life of a service that answers RPC commands (conversations, webhooks): migrate its schema,
 * serve its queue with manual acks, start its background work, then its ops server; close in the
 * reverse order (ops first, so a load balancer stops at once; background work before the queue).
 */
export async function startRpcService(definition: RpcServiceDefinition): Promise<RunningRpcService> {
  const { name, config, logger } = definition;
  if (config.RUN_MIGRATIONS) await prepareDatabase(definition.migrations, definition.schema, logger);
  const queueType = rpcQueueType(config);
  await declareQueues(
    config.AMQP_URL,
    [...rpcQueueDeclarations(definition.queues, queueType), ...(definition.otherQueues ?? [])],
    logger,
  );
  const amqp = connectAmqp(config.AMQP_URL, name, logger);
  const replies = new DirectReplies(config.AMQP_URL, `${name} replies`, logger);
  const registry = createMetricsRegistry();
  const app = await NestFactory.createMicroservice(definition.module(amqp, registry), {
    strategy: new RpcServer({
      connection: amqp,
      replies,
      ...definition.queues,
      queueType,
      operations: definition.operations,
      prefetch: config.AMQP_PREFETCH,
      logger,
      metrics: new RpcServerMetrics(registry),
      failures: DATABASE_FAILURES,
    }),
    logger: new PinoNestLogger(logger),
  });
  app.useGlobalFilters(new PassThroughRpcFilter());
  await app.listen();
  const background = definition.background?.(app);
  await background?.start();
  const ops = await startOpsServer({
    config,
    registry,
    readiness: [
      postgresCheck(app.get(DataSource)),
      rabbitmqCheck(() => amqp.isConnected() && replies.connected),
    ],
    logger,
  });
  logger.info(definition.readyDetails ?? {}, `${name} service ready`);
  return {
    app,
    opsUrl: ops.url,
    async close() {
      await ops.close();
      await background?.stop();
      await app.close();
      await replies.close();
      await amqp.close();
    },
  };
}

/**
 * How the RPC server meets Postgres failing: a read is run again while the database fails over
 * (writes retry inside the command log), and an unavailable database is the 503
 * `database_unavailable`, not an internal error.
 */
const DATABASE_FAILURES: RpcFailurePolicy = {
  retryRead: (call, answerBy) => retryWhileDatabaseUnavailable(call, { answerBy }),
  outage: (error) => (isDatabaseUnavailable(error) ? databaseUnavailable() : undefined),
};

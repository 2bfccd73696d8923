import type { Logger } from 'pino';
import type { ConversationsConfig } from '@app/config';
import {
  AnalyticsRpc,
  ConversationRpc,
  EventRpc,
  CONVERSATIONS_RPC_DEAD_LETTER_QUEUE,
  CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
  CONVERSATIONS_RPC_QUEUE,
  CONVERSATIONS_EVENTS_EXCHANGE,
  CONVERSATIONS_EVENTS_STREAM,
} from '@app/contracts';
import { streamQueueOptions } from '@app/messaging';
import { RunningRpcService, startRpcService } from '@app/runtime';
import { ConversationsAppModule } from './conversations-app.module';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from './data-source';

export type RunningConversationsService = RunningRpcService;

/** Migrates, then serves RPC commands and relays the outbox until close() is called. */
export function startConversationsService(
  config: ConversationsConfig,
  logger: Logger,
): Promise<RunningConversationsService> {
  return startRpcService({
    name: 'conversations',
    config,
    logger,
    schema: CONVERSATIONS_SCHEMA,
    migrations: conversationsDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }),
    queues: {
      queue: CONVERSATIONS_RPC_QUEUE,
      deadLetterQueue: CONVERSATIONS_RPC_DEAD_LETTER_QUEUE,
      presenceExchange: CONVERSATIONS_RPC_PRESENCE_EXCHANGE,
    },
    otherQueues: [
      {
        name: CONVERSATIONS_EVENTS_STREAM,
        options: streamQueueOptions(config.EVENT_STREAM_MAX_AGE, config.EVENT_STREAM_MAX_BYTES),
        bindings: [{ exchange: CONVERSATIONS_EVENTS_EXCHANGE, pattern: '#' }],
      },
    ],
    operations: [ConversationRpc, EventRpc, AnalyticsRpc],
    module: (amqp, registry) => ConversationsAppModule.register(config, logger, amqp, registry),
  });
}

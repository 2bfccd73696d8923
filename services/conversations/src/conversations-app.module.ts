import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { ConversationsConfig } from '@app/config';
import { CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';
import { CommandLog } from '@app/database';
import { EventPublisher } from '@app/messaging';
import { AnalyticsCompactionJob } from './analytics/analytics-compaction.job';
import { AnalyticsHandler } from './analytics/analytics.handler';
import { AnalyticsRepository } from './analytics/analytics.repository';
import { AnalyticsService } from './analytics/analytics.service';
import { RetentionJob } from './commands/retention.job';
import { ConversationsHandler } from './conversations/conversations.handler';
import { ConversationsRepository } from './conversations/conversations.repository';
import { ConversationsService } from './conversations/conversations.service';
import { listSnapshotSealer } from './conversations/list-snapshot-sealer';
import { ConversationReader } from './conversations/conversation-reader';
import { MessageAppender } from './conversations/message-appender';
import { StatementBatchMetrics } from './conversations/statement-batch-metrics';
import { EventsHandler } from './events/events.handler';
import { EventsRepository } from './events/events.repository';
import { EventsService } from './events/events.service';
import { OutboxMetrics } from './outbox/outbox-metrics';
import { OutboxRelay } from './outbox/outbox.relay';
import { OutboxWriter } from './outbox/outbox.writer';
import { conversationsDataSourceOptions, CONVERSATIONS_SCHEMA } from './data-source';
import { AMQP_CONNECTION, CONVERSATIONS_CONFIG, LOGGER } from './core/tokens';

@Module({})
export class ConversationsAppModule {
  static register(
    config: ConversationsConfig,
    logger: Logger,
    amqp: AmqpConnectionManager,
    registry: Registry,
  ): DynamicModule {
    return {
      module: ConversationsAppModule,
      imports: [TypeOrmModule.forRoot(conversationsDataSourceOptions(config))],
      controllers: [ConversationsHandler, AnalyticsHandler, EventsHandler],
      providers: [
        { provide: CONVERSATIONS_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: AMQP_CONNECTION, useValue: amqp },
        { provide: Registry, useValue: registry },
        {
          provide: EventPublisher,
          useFactory: () => new EventPublisher(amqp, CONVERSATIONS_EVENTS_EXCHANGE),
        },
        ConversationsRepository,
        ConversationsService,
        MessageAppender,
        ConversationReader,
        StatementBatchMetrics,
        listSnapshotSealer,
        {
          provide: CommandLog,
          useFactory: (db: DataSource) => new CommandLog(db, CONVERSATIONS_SCHEMA),
          inject: [DataSource],
        },
        EventsRepository,
        EventsService,
        OutboxWriter,
        OutboxRelay,
        OutboxMetrics,
        RetentionJob,
        AnalyticsRepository,
        AnalyticsService,
        AnalyticsCompactionJob,
      ],
    };
  }
}

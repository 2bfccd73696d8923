import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Logger } from 'pino';
import type { ConversationsConfig } from '@app/config';
import { CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';
import { EventPublisher } from '@app/messaging';
import { AnalyticsCompactionJob } from './analytics/analytics-compaction.job';
import { AnalyticsHandler } from './analytics/analytics.handler';
import { AnalyticsRepository } from './analytics/analytics.repository';
import { AnalyticsService } from './analytics/analytics.service';
import { CommandLog } from './commands/command-log';
import { RetentionJob } from './commands/retention.job';
import { ConversationsHandler } from './conversations/conversations.handler';
import { ConversationsRepository } from './conversations/conversations.repository';
import { ConversationsService } from './conversations/conversations.service';
import { OutboxRelay } from './outbox/outbox.relay';
import { OutboxWriter } from './outbox/outbox.writer';
import { conversationsDataSourceOptions } from './data-source';
import { AMQP_CONNECTION, CONVERSATIONS_CONFIG, LOGGER } from './tokens';

@Module({})
export class ConversationsAppModule {
  static register(config: ConversationsConfig, logger: Logger, amqp: AmqpConnectionManager): DynamicModule {
    return {
      module: ConversationsAppModule,
      imports: [TypeOrmModule.forRoot(conversationsDataSourceOptions(config))],
      controllers: [ConversationsHandler, AnalyticsHandler],
      providers: [
        { provide: CONVERSATIONS_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: AMQP_CONNECTION, useValue: amqp },
        {
          provide: EventPublisher,
          useFactory: () => new EventPublisher(amqp, CONVERSATIONS_EVENTS_EXCHANGE),
        },
        ConversationsRepository,
        ConversationsService,
        CommandLog,
        OutboxWriter,
        OutboxRelay,
        RetentionJob,
        AnalyticsRepository,
        AnalyticsService,
        AnalyticsCompactionJob,
      ],
    };
  }
}

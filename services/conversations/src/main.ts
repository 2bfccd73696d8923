import './tracing';
import 'reflect-metadata';
import { conversationsSchema, loadConfig } from '@app/config';
import { HOW_TO_START, runService } from '@app/runtime';
import { startConversationsService } from './conversations-service';

void runService({
  name: 'conversations',
  loadConfig: () => loadConfig(conversationsSchema),
  dependencies: (config) => [
    { name: 'PostgreSQL', url: config.DATABASE_URL, defaultPort: 5432, howToStart: HOW_TO_START.postgres },
    { name: 'RabbitMQ', url: config.AMQP_URL, defaultPort: 5672, howToStart: HOW_TO_START.rabbitmq },
  ],
  start: startConversationsService,
});

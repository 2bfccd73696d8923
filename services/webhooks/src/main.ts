import './tracing';
import 'reflect-metadata';
import { loadConfig, requireSecretsKeysInProduction, webhooksSchema } from '@app/config';
import { HOW_TO_START, runService } from '@app/runtime';
import { startWebhooksService } from './webhooks-service';

void runService({
  name: 'webhooks',
  loadConfig: () => requireSecretsKeysInProduction(loadConfig(webhooksSchema)),
  dependencies: (config) => [
    { name: 'PostgreSQL', url: config.DATABASE_URL, defaultPort: 5432, howToStart: HOW_TO_START.postgres },
    { name: 'RabbitMQ', url: config.AMQP_URL, defaultPort: 5672, howToStart: HOW_TO_START.rabbitmq },
  ],
  start: (config, logger) => startWebhooksService(config, logger),
});

import './tracing';
import 'reflect-metadata';
import { gatewaySchema, loadConfig } from '@app/config';
import { HOW_TO_START, runService } from '@app/runtime';
import { startGateway } from './gateway-service';

void runService({
  name: 'gateway',
  loadConfig: () => loadConfig(gatewaySchema),
  dependencies: (config) => [
    { name: 'PostgreSQL', url: config.DATABASE_URL, defaultPort: 5432, howToStart: HOW_TO_START.postgres },
    { name: 'RabbitMQ', url: config.AMQP_URL, defaultPort: 5672, howToStart: HOW_TO_START.rabbitmq },
    { name: 'Redis', url: config.REDIS_URL, defaultPort: 6379, howToStart: HOW_TO_START.redis },
  ],
  start: startGateway,
});

import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { WebhooksConfig } from '@app/config';
import { CommandLog } from '@app/database';
import { DeliveriesRepository } from './delivery/deliveries.repository';
import { DeliveryLogRepository } from './subscriptions/delivery-log.repository';
import { Dispatcher } from './delivery/dispatcher';
import { TargetPolicy } from './delivery/target-policy';
import { WebhookSender } from './delivery/webhook-sender';
import { EventConsumer } from './fan-out/event-consumer';
import { RetentionJob } from './delivery/retention.job';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';
import { WebhooksHandler } from './subscriptions/webhooks.handler';
import { WebhooksService } from './subscriptions/webhooks.service';
import { webhooksDataSourceOptions, WEBHOOKS_SCHEMA } from './data-source';
import { WebhookMetrics } from './delivery/webhook-metrics';
import { AMQP_CONNECTION, LOGGER, WEBHOOKS_CONFIG } from './core/tokens';
import { SecretCipher, secretsKeyring } from './secrets/secret-cipher';

@Module({})
export class WebhooksAppModule {
  static register(
    config: WebhooksConfig,
    logger: Logger,
    amqp: AmqpConnectionManager,
    registry: Registry,
    targets = new TargetPolicy(config.WEBHOOK_ALLOW_PRIVATE_TARGETS),
  ): DynamicModule {
    return {
      module: WebhooksAppModule,
      imports: [TypeOrmModule.forRoot(webhooksDataSourceOptions(config))],
      controllers: [WebhooksHandler],
      providers: [
        { provide: WEBHOOKS_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: AMQP_CONNECTION, useValue: amqp },
        { provide: Registry, useValue: registry },
        WebhookMetrics,
        { provide: TargetPolicy, useValue: targets },
        { provide: WebhookSender, useFactory: () => new WebhookSender(targets, config.WEBHOOK_TIMEOUT_MS) },
        { provide: SecretCipher, useFactory: () => signingSecretsCipher(config, logger) },
        SubscriptionsRepository,
        DeliveriesRepository,
        DeliveryLogRepository,
        {
          provide: CommandLog,
          useFactory: (db: DataSource) => new CommandLog(db, WEBHOOKS_SCHEMA),
          inject: [DataSource],
        },
        WebhooksService,
        Dispatcher,
        EventConsumer,
        RetentionJob,
      ],
    };
  }
}

/** The cipher of signing secrets at rest; without configured keys, the development key and a warning. */
function signingSecretsCipher(config: WebhooksConfig, logger: Logger): SecretCipher {
  const keyring = secretsKeyring(config.SECRETS_ENCRYPTION_KEYS);
  if (keyring.development)
    logger.warn(
      'SECRETS_ENCRYPTION_KEYS is not set: webhook signing secrets are encrypted with the public development key (docs/operations.md, "Secrets at rest"); production refuses to start so',
    );
  return new SecretCipher(keyring.keys);
}

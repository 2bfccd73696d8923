import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { AnalyticsModule } from './analytics/analytics.module';
import { AuthModule } from './auth/auth.module';
import { ConversationsModule } from './conversations/conversations.module';
import { GatewayCoreModule } from './gateway-core.module';
import { EventsModule } from './events/events.module';
import { RpcModule } from './core/rpc.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/**
 * The gateway: its shared connections (GatewayCoreModule) and one module per feature. Closing the
 * app (`app.close()`) stops the features, then closes the RPC clients and the connections.
 */
@Module({})
export class GatewayAppModule {
  static register(config: GatewayConfig, logger: Logger, registry: Registry): DynamicModule {
    return {
      module: GatewayAppModule,
      imports: [
        GatewayCoreModule.forRoot(config, logger, registry),
        RpcModule,
        AuthModule,
        RateLimitModule,
        IdempotencyModule,
        ConversationsModule,
        AnalyticsModule,
        WebhooksModule,
        EventsModule,
        HealthModule,
      ],
    };
  }
}

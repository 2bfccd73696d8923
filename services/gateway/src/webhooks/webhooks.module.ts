import { Module } from '@nestjs/common';
import { RpcModule } from '../core/rpc.module';
import { WebhooksController } from './webhooks.controller';

/** Webhook subscriptions and their deliveries, answered by the webhooks service. */
@Module({ imports: [RpcModule], controllers: [WebhooksController] })
export class WebhooksModule {}

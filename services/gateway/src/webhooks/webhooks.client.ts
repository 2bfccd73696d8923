import { Inject, Injectable } from '@nestjs/common';
import {
  CreateWebhookCommand,
  DeliveryPage,
  DeliveryRef,
  DeliveryView,
  DeliveryWithAttemptsView,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  UpdateWebhookCommand,
  WebhookPage,
  WebhookPatterns,
  WebhookView,
  WebhookWithSecretView,
} from '@app/contracts';
import { RpcClient } from '@app/messaging';
import type { CallContext } from '../http/request-state';

/** The RpcClient on `webhooks.rpc` (the class token is the conversations service's). */
export const WEBHOOKS_RPC = Symbol('WEBHOOKS_RPC');

/** The webhooks service as the gateway sees it: one RabbitMQ request/reply per operation. */
@Injectable()
export class WebhooksClient {
  constructor(@Inject(WEBHOOKS_RPC) private readonly rpc: RpcClient) {}

  create(call: CallContext, command: CreateWebhookCommand) {
    return this.send<WebhookWithSecretView>(call, WebhookPatterns.create, command);
  }

  list(call: CallContext, query: ListWebhooksQuery) {
    return this.send<WebhookPage>(call, WebhookPatterns.list, query);
  }

  get(call: CallContext, webhookId: string) {
    return this.send<WebhookView>(call, WebhookPatterns.get, { webhookId });
  }

  update(call: CallContext, command: UpdateWebhookCommand) {
    return this.send<WebhookView>(call, WebhookPatterns.update, command);
  }

  delete(call: CallContext, webhookId: string) {
    return this.send<null>(call, WebhookPatterns.delete, { webhookId });
  }

  rotateSecret(call: CallContext, webhookId: string) {
    return this.send<WebhookWithSecretView>(call, WebhookPatterns.rotateSecret, { webhookId });
  }

  test(call: CallContext, webhookId: string) {
    return this.send<DeliveryView>(call, WebhookPatterns.test, { webhookId });
  }

  listDeliveries(call: CallContext, query: ListDeliveriesQuery) {
    return this.send<DeliveryPage>(call, WebhookPatterns.listDeliveries, query);
  }

  getDelivery(call: CallContext, ref: DeliveryRef) {
    return this.send<DeliveryWithAttemptsView>(call, WebhookPatterns.getDelivery, ref);
  }

  retryDelivery(call: CallContext, ref: DeliveryRef) {
    return this.send<DeliveryView>(call, WebhookPatterns.retryDelivery, ref);
  }

  private send<T>(call: CallContext, pattern: string, data: unknown): Promise<T> {
    return this.rpc.send<T>({ pattern, data, ...call });
  }
}

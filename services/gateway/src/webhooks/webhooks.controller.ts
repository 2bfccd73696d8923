import { Body, Controller, Inject, Query } from '@nestjs/common';
import {
  ALL_EVENTS,
  CreateWebhookBody,
  DeliveryId,
  ListDeliveriesParams,
  ListWebhooksParams,
  ReplayWebhookBody,
  type Static,
  type SubscribedEvent,
  UpdateWebhookBody,
  WebhookId,
  WebhookRpc,
} from '@app/contracts';
import { type Dialect, parseEventType } from '@app/dialects';
import { RpcClient } from '@app/messaging';
import { WEBHOOKS_RPC } from '../core/tokens';
import { ApiEndpoint } from '../http/endpoint';
import { pageOf, PathId } from '../http/path-params';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { presentDelivery, presentWebhook } from './webhook-presenter';
import { WebhookEndpoints } from './webhooks.endpoints';
import { WebhookReplay } from './webhook-replay';

/** Event names the schema accepted, in any dialect, as canonical types (or `*`). */
const canonicalEvents = (names: string[]): SubscribedEvent[] =>
  names.map((name) => (name === ALL_EVENTS ? ALL_EVENTS : parseEventType(name)!));

/** Webhook subscriptions: each handler translates dialects and makes one call to the webhooks service. */
@Controller()
export class WebhooksController {
  private readonly replays: WebhookReplay;

  constructor(
    @Inject(WEBHOOKS_RPC) private readonly rpc: RpcClient,
    conversations: RpcClient,
  ) {
    this.replays = new WebhookReplay(conversations, rpc);
  }

  @ApiEndpoint(WebhookEndpoints.create)
  async create(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Body() body: Static<typeof CreateWebhookBody>,
  ) {
    const command = { ...body, events: canonicalEvents(body.events) };
    return presentWebhook(await this.rpc.call(WebhookRpc.create, call, command), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.list)
  async list(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Static<typeof ListWebhooksParams>,
  ) {
    const found = await this.rpc.call(WebhookRpc.list, call, pageOf(query));
    return { data: found.data.map((view) => presentWebhook(view, dialect)), pagination: found.pagination };
  }

  @ApiEndpoint(WebhookEndpoints.get)
  async get(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
  ) {
    return presentWebhook(await this.rpc.call(WebhookRpc.get, call, { webhookId }), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.update)
  async update(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
    @Body() body: Static<typeof UpdateWebhookBody>,
  ) {
    const { events, ...changes } = body;
    const command = {
      webhookId,
      ...changes,
      ...(events && { events: canonicalEvents(events) }),
    };
    return presentWebhook(await this.rpc.call(WebhookRpc.update, call, command), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.delete)
  async delete(@Call() call: CallContext, @PathId('id', WebhookId) webhookId: string): Promise<void> {
    await this.rpc.call(WebhookRpc.delete, call, { webhookId });
  }

  @ApiEndpoint(WebhookEndpoints.rotateSecret)
  async rotateSecret(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
  ) {
    return presentWebhook(await this.rpc.call(WebhookRpc.rotateSecret, call, { webhookId }), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.test)
  async test(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
  ) {
    return presentDelivery(await this.rpc.call(WebhookRpc.test, call, { webhookId }), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.listDeliveries)
  async listDeliveries(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
    @Query() query: Static<typeof ListDeliveriesParams>,
  ) {
    const command = {
      webhookId,
      ...pageOf(query),
      ...(query.status && { status: query.status }),
    };
    const found = await this.rpc.call(WebhookRpc.listDeliveries, call, command);
    return { data: found.data.map((view) => presentDelivery(view, dialect)), pagination: found.pagination };
  }

  @ApiEndpoint(WebhookEndpoints.getDelivery)
  async getDelivery(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
    @PathId('deliveryId', DeliveryId) deliveryId: string,
  ) {
    return presentDelivery(
      await this.rpc.call(WebhookRpc.getDelivery, call, { webhookId, deliveryId }),
      dialect,
    );
  }

  @ApiEndpoint(WebhookEndpoints.retryDelivery)
  async retryDelivery(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', WebhookId) webhookId: string,
    @PathId('deliveryId', DeliveryId) deliveryId: string,
  ) {
    return presentDelivery(
      await this.rpc.call(WebhookRpc.retryDelivery, call, { webhookId, deliveryId }),
      dialect,
    );
  }

  @ApiEndpoint(WebhookEndpoints.replay)
  replay(
    @Call() call: CallContext,
    @PathId('id', WebhookId) webhookId: string,
    @Body() body: Static<typeof ReplayWebhookBody>,
  ) {
    const { types, ...window } = body;
    return this.replays.replay(call, webhookId, {
      ...window,
      ...(types && { types: canonicalEvents(types) }),
    });
  }
}

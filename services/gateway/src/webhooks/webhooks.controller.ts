import { Body, Controller, Inject, Param, Query } from '@nestjs/common';
import {
  ALL_EVENTS,
  CreateWebhookBody,
  DeliveryId,
  ListDeliveriesParams,
  ListWebhooksParams,
  PAGE_SIZE,
  parseWith,
  type Static,
  type SubscribedEvent,
  UpdateWebhookBody,
  WebhookId,
  WebhookRpc,
} from '@app/contracts';
import { type Dialect, parseEventType } from '@app/dialects';
import { RpcClient } from '@app/messaging';
import { ApiEndpoint } from '../http/endpoint';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { presentDelivery, presentWebhook } from './webhook-presenter';
import { WebhookEndpoints } from './webhooks.endpoints';
import { WEBHOOKS_RPC } from './webhooks-rpc.token';

/** Path ids that are not UUIDs name nothing: a 404 like an unknown id, after the body's 400s. */
const webhookId = (id: string) => parseWith(WebhookId, id, 'id').toLowerCase();
const deliveryRef = (id: string, deliveryId: string) => ({
  webhookId: webhookId(id),
  deliveryId: parseWith(DeliveryId, deliveryId, 'deliveryId').toLowerCase(),
});

/** Event names the schema accepted, in any dialect, as canonical types (or `*`). */
const canonicalEvents = (names: string[]): SubscribedEvent[] =>
  names.map((name) => (name.trim() === ALL_EVENTS ? ALL_EVENTS : parseEventType(name)!));

const page = (query: { limit?: number; offset?: number }) => ({
  limit: query.limit ?? PAGE_SIZE.default,
  offset: query.offset ?? 0,
});

/** Webhook subscriptions: each handler translates dialects and makes one call to the webhooks service. */
@Controller()
export class WebhooksController {
  constructor(@Inject(WEBHOOKS_RPC) private readonly rpc: RpcClient) {}

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
    const found = await this.rpc.call(WebhookRpc.list, call, page(query));
    return { data: found.data.map((view) => presentWebhook(view, dialect)), pagination: found.pagination };
  }

  @ApiEndpoint(WebhookEndpoints.get)
  async get(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') id: string) {
    return presentWebhook(await this.rpc.call(WebhookRpc.get, call, { webhookId: webhookId(id) }), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.update)
  async update(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') id: string,
    @Body() body: Static<typeof UpdateWebhookBody>,
  ) {
    const { events, ...changes } = body;
    const command = {
      webhookId: webhookId(id),
      ...changes,
      ...(events && { events: canonicalEvents(events) }),
    };
    return presentWebhook(await this.rpc.call(WebhookRpc.update, call, command), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.delete)
  async delete(@Call() call: CallContext, @Param('id') id: string): Promise<void> {
    await this.rpc.call(WebhookRpc.delete, call, { webhookId: webhookId(id) });
  }

  @ApiEndpoint(WebhookEndpoints.rotateSecret)
  async rotateSecret(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') id: string) {
    return presentWebhook(
      await this.rpc.call(WebhookRpc.rotateSecret, call, { webhookId: webhookId(id) }),
      dialect,
    );
  }

  @ApiEndpoint(WebhookEndpoints.test)
  async test(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') id: string) {
    return presentDelivery(await this.rpc.call(WebhookRpc.test, call, { webhookId: webhookId(id) }), dialect);
  }

  @ApiEndpoint(WebhookEndpoints.listDeliveries)
  async listDeliveries(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') id: string,
    @Query() query: Static<typeof ListDeliveriesParams>,
  ) {
    const command = {
      webhookId: webhookId(id),
      ...page(query),
      ...(query.status && { status: query.status }),
    };
    const found = await this.rpc.call(WebhookRpc.listDeliveries, call, command);
    return { data: found.data.map((view) => presentDelivery(view, dialect)), pagination: found.pagination };
  }

  @ApiEndpoint(WebhookEndpoints.getDelivery)
  async getDelivery(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ) {
    return presentDelivery(
      await this.rpc.call(WebhookRpc.getDelivery, call, deliveryRef(id, deliveryId)),
      dialect,
    );
  }

  @ApiEndpoint(WebhookEndpoints.retryDelivery)
  async retryDelivery(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ) {
    return presentDelivery(
      await this.rpc.call(WebhookRpc.retryDelivery, call, deliveryRef(id, deliveryId)),
      dialect,
    );
  }
}

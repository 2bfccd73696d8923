import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { WebhooksConfig } from '@app/config';
import {
  CreateWebhookCommand,
  DeliveryPage,
  DeliveryRef,
  DeliveryView,
  DeliveryWithAttemptsView,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  RpcRequest,
  UpdateWebhookCommand,
  WEBHOOK_TEST_EVENT,
  WebhookPage,
  WebhookRef,
  WebhookView,
  WebhookWithSecretView,
} from '@app/contracts';
import { CommandLog } from '@app/database';
import { DomainError } from '@app/errors';
import { DeliveriesRepository } from '../delivery/deliveries.repository';
import { newSecret } from '../delivery/signature';
import { TargetPolicy } from '../delivery/target-policy';
import { WEBHOOKS_CONFIG } from '../tokens';
import { commandSchemas, isUuid, normaliseEvents, parsePayload } from './command-schemas';
import { SubscriptionsRepository, toWebhookView } from './subscriptions.repository';

/** After a rotation the previous secret keeps signing (a second signature) this long, as with Svix. */
export const SECRET_ROTATION_GRACE_HOURS = 24;

const webhookNotFound = (id: unknown) =>
  new DomainError('not_found', `Webhook ${String(id).slice(0, 64)} was not found.`);
const deliveryNotFound = (id: unknown) =>
  new DomainError('not_found', `Delivery ${String(id).slice(0, 64)} was not found.`);

/** Subscriptions and their delivery log, per account. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly commands: CommandLog,
    private readonly targets: TargetPolicy,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
  ) {}

  async create(request: RpcRequest<CreateWebhookCommand>): Promise<WebhookWithSecretView> {
    const command = parsePayload(commandSchemas.create, request.data);
    await this.checkUrl(command.url);
    return this.commands.applyOnce(request, async (tx) => {
      const secret = newSecret();
      const row = await this.subscriptions.insert(tx, request.accountId, {
        id: randomUUID(),
        url: command.url,
        events: normaliseEvents(command.events),
        dialect: command.dialect ?? 'en',
        description: command.description ?? null,
        status: command.status ?? 'enabled',
        secret,
      });
      return { ...toWebhookView(row), secret };
    });
  }

  async list(request: RpcRequest<ListWebhooksQuery>): Promise<WebhookPage> {
    const { limit, offset } = parsePayload(commandSchemas.list, request.data);
    const page = await this.subscriptions.page(request.accountId, limit, offset);
    return { data: page.rows.map(toWebhookView), pagination: { limit, offset, total: page.total } };
  }

  async get(request: RpcRequest<WebhookRef>): Promise<WebhookView> {
    const { webhookId } = this.ref(request);
    const row = await this.subscriptions.find(request.accountId, webhookId);
    if (!row) throw webhookNotFound(webhookId);
    return toWebhookView(row);
  }

  async update(request: RpcRequest<UpdateWebhookCommand>): Promise<WebhookView> {
    this.ref(request);
    const { webhookId, ...changes } = parsePayload(commandSchemas.update, request.data);
    if (changes.url !== undefined) await this.checkUrl(changes.url);
    const row = await this.subscriptions.update(request.accountId, webhookId, {
      ...changes,
      ...(changes.events && { events: normaliseEvents(changes.events) }),
    });
    if (!row) throw webhookNotFound(webhookId);
    return toWebhookView(row);
  }

  async delete(request: RpcRequest<WebhookRef>): Promise<null> {
    const { webhookId } = this.ref(request);
    if (!(await this.subscriptions.delete(request.accountId, webhookId))) throw webhookNotFound(webhookId);
    return null;
  }

  rotateSecret(request: RpcRequest<WebhookRef>): Promise<WebhookWithSecretView> {
    const { webhookId } = this.ref(request);
    return this.commands.applyOnce(request, async (tx) => {
      const secret = newSecret();
      const row = await this.subscriptions.rotateSecret(
        tx,
        request.accountId,
        webhookId,
        secret,
        SECRET_ROTATION_GRACE_HOURS,
      );
      if (!row) throw webhookNotFound(webhookId);
      return { ...toWebhookView(row), secret };
    });
  }

  /** Sends `webhook.test` to this subscription alone, through the normal delivery path. */
  test(request: RpcRequest<WebhookRef>): Promise<DeliveryView> {
    const { webhookId } = this.ref(request);
    return this.commands.applyOnce(request, async (tx) => {
      const row = await this.subscriptions.lock(tx, request.accountId, webhookId);
      if (!row) throw webhookNotFound(webhookId);
      if (row.status !== 'enabled') throw disabled(webhookId);
      const eventId = randomUUID();
      return this.deliveries.insertTestDelivery(
        tx,
        request.accountId,
        webhookId,
        { event: eventId, delivery: randomUUID() },
        WEBHOOK_TEST_EVENT,
        { webhook_id: webhookId, message: 'A test event from the Conversation Messaging API.' },
        this.config.WEBHOOK_RETRY_SCHEDULE.length + 1,
      );
    });
  }

  async listDeliveries(request: RpcRequest<ListDeliveriesQuery>): Promise<DeliveryPage> {
    this.ref(request);
    const query = parsePayload(commandSchemas.listDeliveries, request.data);
    if (!(await this.subscriptions.find(request.accountId, query.webhookId)))
      throw webhookNotFound(query.webhookId);
    const page = await this.deliveries.page(
      request.accountId,
      query.webhookId,
      query.status,
      query.limit,
      query.offset,
    );
    return { data: page.rows, pagination: { limit: query.limit, offset: query.offset, total: page.total } };
  }

  async getDelivery(request: RpcRequest<DeliveryRef>): Promise<DeliveryWithAttemptsView> {
    const { webhookId, deliveryId } = this.deliveryRef(request);
    const delivery = await this.deliveries.findWithAttempts(request.accountId, webhookId, deliveryId);
    if (!delivery) {
      if (!(await this.subscriptions.find(request.accountId, webhookId))) throw webhookNotFound(webhookId);
      throw deliveryNotFound(deliveryId);
    }
    return delivery;
  }

  /** Sends a finished delivery once more, now, with the same `webhook-id`. */
  retryDelivery(request: RpcRequest<DeliveryRef>): Promise<DeliveryView> {
    const { webhookId, deliveryId } = this.deliveryRef(request);
    return this.commands.applyOnce(request, async (tx) => {
      const subscription = await this.subscriptions.lock(tx, request.accountId, webhookId);
      if (!subscription) throw webhookNotFound(webhookId);
      const delivery = await this.deliveries.lock(tx, request.accountId, webhookId, deliveryId);
      if (!delivery) throw deliveryNotFound(deliveryId);
      if (subscription.status !== 'enabled') throw disabled(webhookId);
      if (delivery.status === 'pending') {
        throw new DomainError(
          'delivery_pending',
          'This delivery is still being attempted; retry it once it has failed.',
        );
      }
      return this.deliveries.markForRetry(tx, request.accountId, deliveryId);
    });
  }

  /** Any id that is not a UUID names nothing: a 404, like an unknown or another account's id. */
  private ref(request: RpcRequest<unknown>): { webhookId: string } {
    const webhookId = (request.data as Partial<WebhookRef> | undefined)?.webhookId;
    if (!isUuid(webhookId)) throw webhookNotFound(webhookId);
    return { webhookId: webhookId! };
  }

  private deliveryRef(request: RpcRequest<unknown>): DeliveryRef {
    const { webhookId } = this.ref(request);
    const deliveryId = (request.data as Partial<DeliveryRef>).deliveryId;
    if (!isUuid(deliveryId)) throw deliveryNotFound(deliveryId);
    return { webhookId, deliveryId: deliveryId! };
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = await this.targets.problemWith(url);
    if (problem) throw DomainError.validation([{ field: 'url', message: problem }]);
  }
}

const disabled = (id: string) =>
  new DomainError('webhook_disabled', `Webhook ${id} is disabled; enable it (PATCH status "enabled") first.`);

import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { WebhooksConfig } from '@app/config';
import {
  ALL_EVENTS,
  DeliveryPage,
  DeliveryView,
  DeliveryWithAttemptsView,
  RpcCall,
  WEBHOOK_TEST_EVENT,
  WebhookPage,
  WebhookRpc,
  WebhookView,
  WebhookWithSecretView,
} from '@app/contracts';
import { CommandLog } from '@app/database';
import { isPublicEventType } from '@app/dialects';
import { DomainError } from '@app/errors';
import { newSecret } from '../delivery/signature';
import { SecretCipher } from '../secrets/secret-cipher';
import { TargetPolicy } from '../delivery/target-policy';
import { WEBHOOKS_CONFIG } from '../core/tokens';
import { DeliveryLogRepository } from './delivery-log.repository';
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
    private readonly deliveries: DeliveryLogRepository,
    private readonly commands: CommandLog,
    private readonly targets: TargetPolicy,
    private readonly cipher: SecretCipher,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
  ) {}

  async create(request: RpcCall<typeof WebhookRpc.create>): Promise<WebhookWithSecretView> {
    const command = request.data;
    await this.checkUrl(command.url);
    const stored = await this.commands.applyOnce(request, async (tx) => {
      const id = randomUUID();
      const secretEncrypted = this.cipher.encrypt(newSecret(), id);
      const row = await this.subscriptions.insert(tx, request.accountId, {
        id,
        url: command.url,
        events: normaliseEvents(command.events),
        dialect: command.dialect ?? 'en',
        description: command.description ?? null,
        status: command.status ?? 'enabled',
        secretEncrypted,
      });
      return { ...toWebhookView(row), secret: secretEncrypted };
    });
    return this.withSecretInClear(stored);
  }

  async list(request: RpcCall<typeof WebhookRpc.list>): Promise<WebhookPage> {
    const { limit, offset } = request.data;
    const page = await this.subscriptions.page(request.accountId, limit, offset);
    return { data: page.rows.map(toWebhookView), pagination: { limit, offset, total: page.total } };
  }

  async get(request: RpcCall<typeof WebhookRpc.get>): Promise<WebhookView> {
    const { webhookId } = request.data;
    const row = await this.subscriptions.find(request.accountId, webhookId);
    if (!row) throw webhookNotFound(webhookId);
    return toWebhookView(row);
  }

  async update(request: RpcCall<typeof WebhookRpc.update>): Promise<WebhookView> {
    const { webhookId, ...changes } = request.data;
    if (changes.url !== undefined) await this.checkUrl(changes.url);
    return this.commands.applyOnce(request, async (tx) => {
      const row = await this.subscriptions.update(tx, request.accountId, webhookId, {
        ...changes,
        ...(changes.events && { events: normaliseEvents(changes.events) }),
      });
      if (!row) throw webhookNotFound(webhookId);
      return toWebhookView(row);
    });
  }

  delete(request: RpcCall<typeof WebhookRpc.delete>): Promise<null> {
    const { webhookId } = request.data;
    return this.commands.applyOnce(request, async (tx) => {
      if (!(await this.subscriptions.delete(tx, request.accountId, webhookId)))
        throw webhookNotFound(webhookId);
      return null;
    });
  }

  async rotateSecret(request: RpcCall<typeof WebhookRpc.rotateSecret>): Promise<WebhookWithSecretView> {
    const { webhookId } = request.data;
    const stored = await this.commands.applyOnce(request, async (tx) => {
      const secretEncrypted = this.cipher.encrypt(newSecret(), webhookId);
      const row = await this.subscriptions.rotateSecret(
        tx,
        request.accountId,
        webhookId,
        secretEncrypted,
        SECRET_ROTATION_GRACE_HOURS,
      );
      if (!row) throw webhookNotFound(webhookId);
      return { ...toWebhookView(row), secret: secretEncrypted };
    });
    return this.withSecretInClear(stored);
  }

  /**
   * The reply of a create or rotate-secret command is stored (and replayed for a repeat) with the
   * secret encrypted as on its row; only the answer sent back holds it in clear.
   */
  private withSecretInClear(stored: WebhookWithSecretView): WebhookWithSecretView {
    return { ...stored, secret: this.cipher.decrypt(stored.secret, stored.id) };
  }

  /** Sends `webhook.test` to this subscription alone, through the normal delivery path. */
  test(request: RpcCall<typeof WebhookRpc.test>): Promise<DeliveryView> {
    const { webhookId } = request.data;
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

  async listDeliveries(request: RpcCall<typeof WebhookRpc.listDeliveries>): Promise<DeliveryPage> {
    const query = request.data;
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

  async getDelivery(request: RpcCall<typeof WebhookRpc.getDelivery>): Promise<DeliveryWithAttemptsView> {
    const { webhookId, deliveryId } = request.data;
    const delivery = await this.deliveries.findWithAttempts(request.accountId, webhookId, deliveryId);
    if (!delivery) {
      if (!(await this.subscriptions.find(request.accountId, webhookId))) throw webhookNotFound(webhookId);
      throw deliveryNotFound(deliveryId);
    }
    return delivery;
  }

  /** Sends a finished delivery once more, now, with the same `webhook-id`. */
  retryDelivery(request: RpcCall<typeof WebhookRpc.retryDelivery>): Promise<DeliveryView> {
    const { webhookId, deliveryId } = request.data;
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
      const retried = await this.deliveries.markForRetry(tx, request.accountId, deliveryId);
      // Its event went with its deleted conversation: there is nothing left to send.
      if (!retried) throw deliveryNotFound(deliveryId);
      return retried;
    });
  }

  /** A part of a replay (the gateway reads the window's events): new deliveries under the events' ids. */
  replay(request: RpcCall<typeof WebhookRpc.replay>): Promise<{ events: number }> {
    const { webhookId, events } = request.data;
    return this.commands.applyOnce(request, async (tx) => {
      const row = await this.subscriptions.lock(tx, request.accountId, webhookId);
      if (!row) throw webhookNotFound(webhookId);
      if (row.status !== 'enabled') throw disabled(webhookId);
      await this.deliveries.insertReplay(
        tx,
        request.accountId,
        webhookId,
        events,
        this.config.WEBHOOK_RETRY_SCHEDULE.length + 1,
      );
      return { events: events.length };
    });
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = await this.targets.problemWith(url);
    if (problem) throw DomainError.validation([{ field: 'url', message: problem }]);
  }
}

/** Each type once, in a stable order; `*` stands for the four public types, so it replaces them. */
function normaliseEvents<T extends string>(list: T[]): T[] {
  const unique = [...new Set(list)].sort();
  if (!unique.includes(ALL_EVENTS as T)) return unique;
  return [ALL_EVENTS as T, ...unique.filter((type) => type !== ALL_EVENTS && !isPublicEventType(type))];
}

const disabled = (id: string) =>
  new DomainError('webhook_disabled', `Webhook ${id} is disabled; enable it (PATCH status "enabled") first.`);

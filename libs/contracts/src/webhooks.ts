import type { Dialect, PublicEventType } from '@app/dialects';

/** Names on the broker owned by the webhooks service. A published name never changes. */
export const WEBHOOKS_RPC_QUEUE = 'webhooks.rpc';
export const WEBHOOKS_RPC_DEAD_LETTER_QUEUE = 'webhooks.rpc.dead-letter';
export const WEBHOOKS_RPC_PRESENCE_EXCHANGE = 'webhooks.rpc.presence';
/** The fan-out queue: bound to `conversations.events` for the four public event types. */
export const WEBHOOKS_EVENTS_QUEUE = 'webhooks.events';
/** Events the fan-out cannot parse end up here (dead-lettered by the broker, with x-death). */
export const WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE = 'webhooks.events.dead-letter';

/** The event a `POST /v1/webhooks/{id}/test` sends; the same spelling in every dialect. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
/** `*` subscribes to every public event type, present and future. */
export const ALL_EVENTS = '*';

/** RPC patterns the webhooks service answers. Payloads travel inside an RpcRequest. */
export const WebhookPatterns = {
  create: 'webhooks.create',
  list: 'webhooks.list',
  get: 'webhooks.get',
  update: 'webhooks.update',
  delete: 'webhooks.delete',
  rotateSecret: 'webhooks.rotate-secret',
  test: 'webhooks.test',
  listDeliveries: 'webhooks.list-deliveries',
  getDelivery: 'webhooks.get-delivery',
  retryDelivery: 'webhooks.retry-delivery',
} as const;

export const SUBSCRIPTION_STATUSES = ['enabled', 'disabled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Canonical (en) event types, or `*`. */
export type SubscribedEvent = PublicEventType | typeof ALL_EVENTS;

export interface CreateWebhookCommand {
  url: string;
  events: SubscribedEvent[];
  dialect?: Dialect;
  description?: string | null;
  status?: SubscriptionStatus;
}

export interface UpdateWebhookCommand {
  webhookId: string;
  url?: string;
  events?: SubscribedEvent[];
  dialect?: Dialect;
  description?: string | null;
  status?: SubscriptionStatus;
}

export interface WebhookRef {
  webhookId: string;
}

export interface ListWebhooksQuery {
  limit: number;
  offset: number;
}

export interface ListDeliveriesQuery extends ListWebhooksQuery {
  webhookId: string;
  status?: DeliveryStatus;
}

export interface DeliveryRef {
  webhookId: string;
  deliveryId: string;
}

/** A subscription as the webhooks service returns it: canonical (en) event names. */
export interface WebhookView {
  id: string;
  url: string;
  events: SubscribedEvent[];
  dialect: Dialect;
  description: string | null;
  status: SubscriptionStatus;
  /** Why the service disabled it (`endpoint_gone`, `failing`), or null. */
  disabled_reason: string | null;
  /** Since when every attempt has failed (null while healthy). */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

/** Create and rotate answer with the signing secret, the only time it is shown in full. */
export interface WebhookWithSecretView extends WebhookView {
  secret: string;
}

export interface WebhookPage {
  data: WebhookView[];
  pagination: { limit: number; offset: number; total: number };
}

export interface DeliveryAttemptView {
  attempt: number;
  started_at: string;
  duration_ms: number;
  /** The subscriber's HTTP status, or null when no response came (timeout, refused, blocked). */
  status_code: number | null;
  /** The first bytes of the response body (truncated). */
  response_body: string | null;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  /** Canonical event type (`webhook.test` for test sends). */
  event_type: PublicEventType | typeof WEBHOOK_TEST_EVENT;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  created_at: string;
  completed_at: string | null;
}

export interface DeliveryWithAttemptsView extends DeliveryView {
  /** Every attempt, oldest first. */
  attempts: DeliveryAttemptView[];
}

export interface DeliveryPage {
  data: DeliveryView[];
  pagination: { limit: number; offset: number; total: number };
}

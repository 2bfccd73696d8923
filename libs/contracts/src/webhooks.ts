import type { EventType } from '@app/dialects';

/** Names on the broker owned by the webhooks service. A published name never changes. */
export const WEBHOOKS_RPC_QUEUE = 'webhooks.rpc';
export const WEBHOOKS_RPC_DEAD_LETTER_QUEUE = 'webhooks.rpc.dead-letter';
export const WEBHOOKS_RPC_PRESENCE_EXCHANGE = 'webhooks.rpc.presence';
/** The fan-out queue: bound to `conversations.events` for every event type. */
export const WEBHOOKS_EVENTS_QUEUE = 'webhooks.events';
/** Events the fan-out cannot parse end up here (dead-lettered by the broker, with x-death). */
export const WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE = 'webhooks.events.dead-letter';

/** The event a `POST /v1/webhooks/{id}/test` sends; the same spelling in every dialect. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
/**
 * `*` subscribes to the four original public event types (PUBLIC_EVENT_TYPES); the types added
 * since are named explicitly, so a `*` subscriber never receives a type it did not expect.
 */
export const ALL_EVENTS = '*';

export const SUBSCRIPTION_STATUSES = ['enabled', 'disabled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Canonical (en) event types, or `*`. */
export type SubscribedEvent = EventType | typeof ALL_EVENTS;

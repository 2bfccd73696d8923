import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
import { DIALECTS, EVENT_SPELLINGS, EVENT_TYPES } from '@app/dialects';
import { pageParams } from './conversation-requests';
import { EventView } from './events-api';
import { MAX_OFFSET, PAGE_SIZE } from './conversation-commands';
import { rpcOperation, rpcQuery } from './rpc-envelope';
import { Integer, Nullable, Strict, StringEnum, Text, Timestamp, Uuid } from './schema-types';
import { ALL_EVENTS, DELIVERY_STATUSES, SUBSCRIPTION_STATUSES, WEBHOOK_TEST_EVENT } from './webhooks';

/**
 * Webhook subscriptions and deliveries: the webhooks service's commands and views (canonical event
 * types) and the public API's bodies and responses (event names in any dialect).
 */

export const WEBHOOK_LIMITS = { url: 2048, description: 500, events: 20, eventName: 100 } as const;

/** Every accepted event name: `*` and each event type in each dialect. */
export const ALL_EVENT_SPELLINGS: string[] = [ALL_EVENTS, ...EVENT_SPELLINGS];

export const WebhookId = Uuid({
  'x-not-found': 'Webhook',
  examples: ['3f2a9c1e-7b6d-4e5f-8a9b-0c1d2e3f4a5b'],
});
export const DeliveryId = Uuid({
  'x-not-found': 'Delivery',
  examples: ['9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b'],
});

const URL_DOC =
  'Where deliveries are POSTed: https (http only where private targets are allowed). Hosts resolving to loopback, private, link-local, carrier-grade NAT or metadata addresses are refused.';
const DIALECT_DOC = 'How `type` (and conversation statuses) are spelled in what the subscriber receives.';

/** The fields a subscription is made of, given the schema of one event name. */
const subscriptionFields = <E extends TSchema>(eventName: E) => ({
  url: Text({
    minLength: 1,
    maxLength: WEBHOOK_LIMITS.url,
    description: URL_DOC,
    examples: ['https://example.com/webhooks/conversations'],
  }),
  events: Type.Array(eventName, {
    minItems: 1,
    maxItems: WEBHOOK_LIMITS.events,
    description:
      'Event names in any dialect, or `*` for the four public ones (conversation.started, message.received, conversation.closed, lead.captured); the others are named explicitly.',
    examples: [['conversation.started', 'mesej.diterima']],
  }),
  dialect: Type.Optional(StringEnum(DIALECTS, { description: DIALECT_DOC, default: 'en' })),
  description: Type.Optional(
    Nullable(Text({ maxLength: WEBHOOK_LIMITS.description, examples: ['CRM sync'] })),
  ),
  status: Type.Optional(
    StringEnum(SUBSCRIPTION_STATUSES, {
      default: 'enabled',
      description:
        'Disable to pause deliveries (pending ones wait); enable to resume and clear a failure streak.',
    }),
  ),
});

/**
 * Every field optional and without its default: a change leaves an absent field as it is (a
 * default would tell generated clients the field is always sent).
 */
const partial = <T extends Record<string, TSchema>>(fields: T) =>
  Object.fromEntries(
    Object.entries(fields).map(([name, { default: _default, ...schema }]) => [
      name,
      Type.Optional(schema as TSchema),
    ]),
  ) as {
    [K in keyof T]: TOptional<T[K]>;
  };

const CanonicalEvent = StringEnum([ALL_EVENTS, ...EVENT_TYPES] as const);
/** An event name in any dialect, case and spacing aside, or `*` (the `x-event-name` keyword). */
const EventNameInput = Type.Unsafe<string>({
  type: 'string',
  maxLength: WEBHOOK_LIMITS.eventName,
  'x-event-name': true,
  examples: ALL_EVENT_SPELLINGS,
});

// Commands of the webhooks service (canonical event types).
export const CreateWebhookCommand = Strict(subscriptionFields(CanonicalEvent));
export type CreateWebhookCommand = Static<typeof CreateWebhookCommand>;
export const UpdateWebhookCommand = Strict({
  webhookId: WebhookId,
  ...partial(subscriptionFields(CanonicalEvent)),
});
export type UpdateWebhookCommand = Static<typeof UpdateWebhookCommand>;
export const WebhookRef = Strict({ webhookId: WebhookId });
export type WebhookRef = Static<typeof WebhookRef>;
export const ListWebhooksQuery = Strict({ limit: Integer(1, PAGE_SIZE.max), offset: Integer(0, MAX_OFFSET) });
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>;
export const ListDeliveriesQuery = Strict({
  webhookId: WebhookId,
  limit: Integer(1, PAGE_SIZE.max),
  offset: Integer(0, MAX_OFFSET),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
});
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;
export const DeliveryRef = Strict({ webhookId: WebhookId, deliveryId: DeliveryId });
export type DeliveryRef = Static<typeof DeliveryRef>;

// Views: what the service answers (canonical), and the same shapes as the API renders them.
const webhookFields = <E extends TSchema>(eventName: E) => ({
  id: WebhookId,
  url: Type.String({ examples: ['https://example.com/webhooks/conversations'] }),
  events: Type.Array(eventName, {
    description: 'Subscribed event names in the output dialect, or `*`.',
    examples: [['conversation.started', 'message.received']],
  }),
  dialect: StringEnum(DIALECTS, { examples: ['en'] }),
  description: Nullable(Type.String({ examples: ['CRM sync'] })),
  status: StringEnum(SUBSCRIPTION_STATUSES, { examples: ['enabled'] }),
  disabled_reason: Nullable(Type.String(), {
    description:
      'Why it is disabled: `disabled_by_user`, `endpoint_gone` (it answered 410), `failing` (every attempt failed for 5 days).',
    examples: [null],
  }),
  failing_since: Nullable(Timestamp(), {
    description: 'Start of the current failure streak.',
    examples: [null],
  }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
const SECRET = Type.String({
  description: 'Signing secret (`whsec_` + base64). Shown only here: on create and on rotation.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});
const pagination = Strict({
  limit: Type.Integer({ examples: [20] }),
  offset: Type.Integer({ examples: [0] }),
  total: Type.Integer({ examples: [3] }),
});

const RenderedEvent = StringEnum(ALL_EVENT_SPELLINGS);
export const WebhookView = Strict(webhookFields(CanonicalEvent));
export type WebhookView = Static<typeof WebhookView>;
export const WebhookWithSecretView = Strict({ ...webhookFields(CanonicalEvent), secret: SECRET });
export type WebhookWithSecretView = Static<typeof WebhookWithSecretView>;
export const WebhookPage = Strict({ data: Type.Array(WebhookView), pagination });
export type WebhookPage = Static<typeof WebhookPage>;
export const WebhookResponse = Strict(webhookFields(RenderedEvent));
export const WebhookWithSecretResponse = Strict({ ...webhookFields(RenderedEvent), secret: SECRET });
export const WebhookListResponse = Strict({ data: Type.Array(WebhookResponse), pagination });

export const DeliveryAttemptView = Strict({
  attempt: Type.Integer({ minimum: 1, examples: [1] }),
  started_at: Timestamp(),
  duration_ms: Type.Integer({ minimum: 0, examples: [84] }),
  status_code: Nullable(Type.Integer({ examples: [503] }), { description: 'Null when no response came.' }),
  response_body: Nullable(Type.String({ examples: ['Service Unavailable'] }), {
    description: 'First 1 KiB of the response body.',
  }),
  error: Nullable(Type.String({ examples: ['connection refused'] })),
});
export type DeliveryAttemptView = Static<typeof DeliveryAttemptView>;

const deliveryFields = <E extends TSchema>(eventType: E) => ({
  id: DeliveryId,
  webhook_id: WebhookId,
  event_id: Uuid({
    description: 'Also the `webhook-id` header of every attempt.',
    examples: ['67869b47-9c87-4c5a-9920-81d251ca95f4'],
  }),
  event_type: eventType,
  status: StringEnum(DELIVERY_STATUSES, { examples: ['pending'] }),
  attempt_count: Type.Integer({ minimum: 0, examples: [1] }),
  next_attempt_at: Nullable(Timestamp()),
  last_attempt_at: Nullable(Timestamp()),
  last_status_code: Nullable(Type.Integer({ examples: [503] })),
  created_at: Timestamp(),
  completed_at: Nullable(Timestamp(), { examples: [null] }),
});
const deliveryWithAttempts = <E extends TSchema>(eventType: E) =>
  Strict({
    ...deliveryFields(eventType),
    attempts: Type.Array(DeliveryAttemptView, { description: 'Every attempt, oldest first.' }),
  });

const CanonicalDeliveryEvent = StringEnum([...EVENT_TYPES, WEBHOOK_TEST_EVENT] as const);
const RenderedDeliveryEvent = StringEnum(
  [...ALL_EVENT_SPELLINGS.filter((name) => name !== ALL_EVENTS), WEBHOOK_TEST_EVENT],
  {
    description: 'In the output dialect.',
    examples: ['conversation.started'],
  },
);
export const DeliveryView = Strict(deliveryFields(CanonicalDeliveryEvent));
export type DeliveryView = Static<typeof DeliveryView>;
export const DeliveryWithAttemptsView = deliveryWithAttempts(CanonicalDeliveryEvent);
export type DeliveryWithAttemptsView = Static<typeof DeliveryWithAttemptsView>;
export const DeliveryPage = Strict({ data: Type.Array(DeliveryView), pagination });
export type DeliveryPage = Static<typeof DeliveryPage>;
export const DeliveryResponse = Strict(deliveryFields(RenderedDeliveryEvent));
export const DeliveryWithAttemptsResponse = deliveryWithAttempts(RenderedDeliveryEvent);
export const DeliveryListResponse = Strict({ data: Type.Array(DeliveryResponse), pagination });

/** The most events one replay re-delivers: a longer window is refused (422 `replay_too_large`). */
export const REPLAY_MAX_EVENTS = 10_000;
/** Events per part of a replay: per page read and per command to the webhooks service. */
export const REPLAY_PART_EVENTS = 500;

/** A part of a replay, in order: each event becomes a new delivery with its original id. */
export const ReplayEventsCommand = Strict({
  webhookId: WebhookId,
  events: Type.Array(EventView, { maxItems: REPLAY_PART_EVENTS }),
});
export type ReplayEventsCommand = Static<typeof ReplayEventsCommand>;
export const ReplayCount = Strict({
  events: Type.Integer({
    minimum: 0,
    description: 'Events in the window, each now a delivery to this webhook, in order.',
    examples: [42],
  }),
});

/** Every operation of the webhooks service: pattern, command schema, reply schema. */
export const WebhookRpc = {
  create: rpcOperation('webhooks.create', CreateWebhookCommand, WebhookWithSecretView),
  list: rpcQuery('webhooks.list', ListWebhooksQuery, WebhookPage),
  get: rpcQuery('webhooks.get', WebhookRef, WebhookView),
  update: rpcOperation('webhooks.update', UpdateWebhookCommand, WebhookView),
  delete: rpcOperation('webhooks.delete', WebhookRef, Type.Null()),
  rotateSecret: rpcOperation('webhooks.rotate-secret', WebhookRef, WebhookWithSecretView),
  test: rpcOperation('webhooks.test', WebhookRef, DeliveryView),
  listDeliveries: rpcQuery('webhooks.list-deliveries', ListDeliveriesQuery, DeliveryPage),
  getDelivery: rpcQuery('webhooks.get-delivery', DeliveryRef, DeliveryWithAttemptsView),
  retryDelivery: rpcOperation('webhooks.retry-delivery', DeliveryRef, DeliveryView),
  replay: rpcOperation('webhooks.replay', ReplayEventsCommand, ReplayCount),
};

// The public API's bodies and query parameters.
export const CreateWebhookBody = Strict(subscriptionFields(EventNameInput));
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;
export const UpdateWebhookBody = Strict(partial(subscriptionFields(EventNameInput)));
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;
export const ListWebhooksParams = Strict(pageParams);
export const ListDeliveriesParams = Strict({
  ...pageParams,
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'Filter (alias `stan`).' })),
});

/** `POST /v1/webhooks/{id}/replay` (docs/webhooks.md, "Replay"). */
export const ReplayWebhookBody = Strict({
  since: Type.String({
    format: 'date-time',
    description: 'Re-deliver the stored events created at or after this instant.',
    examples: ['2026-11-01T00:00:00Z'],
  }),
  until: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'And before this instant (exclusive); default now.',
      examples: ['2026-11-02T00:00:00Z'],
    }),
  ),
  types: Type.Optional(
    Type.Array(EventNameInput, {
      minItems: 1,
      maxItems: WEBHOOK_LIMITS.events,
      description: "Only these event types, in any dialect, or `*`; default the subscription's.",
      examples: [['conversation.started', 'mesej.diterima']],
    }),
  ),
});
export type ReplayWebhookBody = Static<typeof ReplayWebhookBody>;

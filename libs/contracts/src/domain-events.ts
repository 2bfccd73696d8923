import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { type Dialect, EVENT_TYPES, type EventType, parseStatus, renderStatus } from '@app/dialects';
import {
  CanonicalStatus,
  ConversationEventResponse,
  ConversationView,
  LeadView,
  MessageView,
  RenderedStatus,
} from './conversation-views';
import { Integer, RequestId, Strict, StringEnum, Timestamp, Traceparent, Uuid } from './schema-types';

/** What `conversation.updated` may name as changed. */
export const EDITED_FIELDS = ['subject', 'visitor', 'metadata', 'tags'] as const;
export type EditedField = (typeof EDITED_FIELDS)[number];

/**
 * Every event the conversations service publishes to `conversations.events`; the routing key is
 * the type. The first four are the original public events (a webhook's `*`); the others are
 * named explicitly by subscriptions. All of them are in the events API and the stream.
 */
export const DOMAIN_EVENT_TYPES = EVENT_TYPES;
export type DomainEventType = EventType;

/**
 * The `data` of each event type, given how a conversation and a status are spelled: canonically
 * between services, in the output dialect in what the API and webhooks show.
 */
const eventPayloads = <C extends TSchema, S extends TSchema>(conversation: C, status: S) => {
  const conversationEvent = Strict({ conversation });
  const messageEvent = Strict({ conversation_id: Type.String({ format: 'uuid' }), message: MessageView });
  return {
    'conversation.started': conversationEvent,
    'message.received': messageEvent,
    'conversation.closed': conversationEvent,
    'lead.captured': Strict({ conversation_id: Type.String({ format: 'uuid' }), lead: LeadView }),
    'conversation.reopened': conversationEvent,
    'conversation.status_changed': Strict({ conversation, previous_status: status }),
    'message.sent': messageEvent,
    'conversation.updated': Strict({
      conversation,
      changed: Type.Array(StringEnum(EDITED_FIELDS), { description: 'The fields whose value changed.' }),
      tags_added: Type.Optional(
        Type.Array(Type.String(), {
          description: 'The tags the change added (always present since tags exist; empty when none).',
          examples: [['refund']],
        }),
      ),
      tags_removed: Type.Optional(
        Type.Array(Type.String(), {
          description: 'The tags the change removed (always present since tags exist; empty when none).',
          examples: [['vip']],
        }),
      ),
    }),
    'conversation.deleted': Strict({
      id: Uuid({ description: 'The id of the conversation deleted; nothing else of it remains.' }),
    }),
  } satisfies Record<DomainEventType, unknown>;
};

/** The `data` of each event type as the outbox stores it and the broker carries it. */
export const DomainEventPayloads = eventPayloads(ConversationView, CanonicalStatus);
/** The same as the events API, the stream and webhooks show it: statuses in the output dialect. */
export const RenderedEventPayloads = eventPayloads(ConversationEventResponse, RenderedStatus);

export type DomainEventData = { [T in DomainEventType]: Static<(typeof DomainEventPayloads)[T]> };

export const CLOUDEVENTS_SOURCE = '/services/conversations';

/** A conversation's event counter: 1 for its first event, +1 for each next. */
export const EventSequence = (options: { description: string }) =>
  Integer(1, 2_147_483_647, { examples: [1], ...options });

/** What every CloudEvent carries besides its type and data, in the document's order. */
const envelopeHead = {
  specversion: Type.Literal('1.0'),
  id: Uuid({ description: 'Unique per event, stable across redeliveries. Deduplicate by it.' }),
  source: Type.Literal(CLOUDEVENTS_SOURCE),
};
const envelopeTail = {
  time: Timestamp({ description: 'When the change was made (RFC 3339, UTC, milliseconds).' }),
  subject: Uuid({ description: 'The id of the conversation the event is about.' }),
  datacontenttype: Type.Literal('application/json'),
  accountid: Uuid({
    description: 'The account that owns the conversation (CloudEvents extension attribute).',
  }),
  sequence: EventSequence({
    description:
      "The event's position among its conversation's events: 1 for the first, +1 for each next, assigned in the transaction of the change (CloudEvents extension attribute).",
  }),
  requestid: Type.Optional(
    RequestId({
      description:
        'The `X-Request-Id` of the API request that caused the change (CloudEvents extension attribute); absent for changes no request made. Logs name it `request_id`.',
    }),
  ),
  traceparent: Type.Optional(
    Traceparent({
      description:
        "W3C Trace Context of the command that made the change (CloudEvents distributed tracing extension): its trace id is the API request's. Present only when the services export traces.",
    }),
  ),
};

const cloudEventOf = <T extends DomainEventType>(type: T) =>
  Strict(
    {
      ...envelopeHead,
      type: Type.Literal(type, { description: 'The event type; also the AMQP routing key.' }),
      ...envelopeTail,
      data: DomainEventPayloads[type],
    },
    { description: `CloudEvents 1.0 JSON envelope (structured mode) of a \`${type}\` event.` },
  );

/**
 * Each event type's whole message: the CloudEvents 1.0 JSON envelope (structured mode) with the
 * extension attributes `accountid`, `sequence` and, when an API request caused the event,
 * `requestid` (its X-Request-Id, for following it in logs), `traceparent` when traces are exported
 * (CloudEvents distributed tracing), and the type's data. Closed: the
 * AsyncAPI document (docs/asyncapi.yaml) is generated from these schemas and lists every attribute.
 */
export const CloudEventSchemas = Object.fromEntries(
  DOMAIN_EVENT_TYPES.map((type) => [type, cloudEventOf(type)]),
) as { [T in DomainEventType]: ReturnType<typeof cloudEventOf<T>> };

type Envelope = Static<ReturnType<typeof Strict<typeof envelopeHead & typeof envelopeTail>>>;

/** A CloudEvent of type T (of any type by default), as the outbox writes it. */
export type CloudEvent<T extends DomainEventType = DomainEventType> = Envelope & {
  type: T;
  data: DomainEventData[T];
};

/**
 * An event's `data` as a response in `dialect` shows it: conversation statuses (the conversation's
 * and a status change's previous one) rendered, everything else as stored.
 */
export function renderEventData(data: unknown, dialect: Dialect): unknown {
  if (dialect === 'en' || data === null || typeof data !== 'object') return data;
  const rendered = { ...(data as Record<string, unknown>) };
  const render = (value: unknown) => {
    const status = typeof value === 'string' ? parseStatus(value) : undefined;
    return status ? renderStatus(status, dialect) : value;
  };
  const conversation = rendered.conversation as { status?: unknown } | undefined;
  if (conversation && typeof conversation === 'object' && 'status' in conversation) {
    rendered.conversation = { ...conversation, status: render(conversation.status) };
  }
  if ('previous_status' in rendered) rendered.previous_status = render(rendered.previous_status);
  return rendered;
}

import { Type, type Static } from '@sinclair/typebox';
import { type Dialect, EVENT_TYPES, type EventType, parseStatus, renderStatus } from '@app/dialects';
import { CanonicalStatus, ConversationView, LeadView, MessageView } from './conversation-views';
import { Strict } from './schema-types';

/**
 * Every event the conversations service publishes to `conversations.events`; the routing key is
 * the type. The first four are the interface's public events (a webhook's `*`); the others are
 * named explicitly by subscriptions. All of them are in the events API and the stream.
 */
export const DOMAIN_EVENT_TYPES = EVENT_TYPES;
export type DomainEventType = EventType;

const conversationEvent = Strict({ conversation: ConversationView });
const messageEvent = Strict({ conversation_id: Type.String({ format: 'uuid' }), message: MessageView });

/** The `data` of each event type. */
export const DomainEventPayloads = {
  'conversation.started': conversationEvent,
  'message.received': messageEvent,
  'conversation.closed': conversationEvent,
  'lead.captured': Strict({ conversation_id: Type.String({ format: 'uuid' }), lead: LeadView }),
  'conversation.reopened': conversationEvent,
  'conversation.status_changed': Strict({ conversation: ConversationView, previous_status: CanonicalStatus }),
  'message.sent': messageEvent,
  'conversation.updated': Strict({
    conversation: ConversationView,
    changed: Type.Array(
      Type.Union([Type.Literal('subject'), Type.Literal('visitor'), Type.Literal('metadata')]),
      {
        description: 'The fields whose value changed.',
      },
    ),
  }),
} satisfies Record<DomainEventType, unknown>;

export type DomainEventData = { [T in DomainEventType]: Static<(typeof DomainEventPayloads)[T]> };

export const CLOUDEVENTS_SOURCE = '/services/conversations';

/**
 * CloudEvents 1.0 JSON envelope (structured mode), with the `accountid` and `sequence` extensions
 * and, when an API request caused the event, the `requestid` extension (its X-Request-Id, for
 * following it in logs). `sequence` numbers a conversation's events: 1 for its first, +1 for each
 * next, assigned in the transaction that wrote the event (absent only on events written before it
 * existed).
 */
export interface CloudEvent<T extends DomainEventType = DomainEventType> {
  specversion: '1.0';
  id: string;
  source: string;
  type: T;
  time: string;
  subject: string;
  datacontenttype: 'application/json';
  accountid: string;
  sequence?: number;
  requestid?: string;
  data: DomainEventData[T];
}

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

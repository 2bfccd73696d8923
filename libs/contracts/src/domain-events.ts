import { Type, type Static } from '@sinclair/typebox';
import { CanonicalStatus, ConversationView, LeadView, MessageView } from './conversation-views';
import { Strict } from './schema-types';

/**
 * Every event the conversations service publishes to `conversations.events`; the routing key is
 * the type. The first four are the interface's public events (webhooks fan them out); the others
 * are broker-only, for internal subscribers.
 */
export const DOMAIN_EVENT_TYPES = [
  'conversation.started',
  'message.received',
  'conversation.closed',
  'lead.captured',
  'conversation.reopened',
  'conversation.status_changed',
  'message.sent',
  'conversation.updated',
] as const;
export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

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
 * CloudEvents 1.0 JSON envelope (structured mode), with the `accountid` extension and, when an API
 * request caused the event, the `requestid` extension (its X-Request-Id, for following it in logs).
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
  requestid?: string;
  data: DomainEventData[T];
}

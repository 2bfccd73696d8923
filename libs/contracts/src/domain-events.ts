import type { ConversationView, LeadView, MessageView } from './conversation-views';

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
] as const;
export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

export interface DomainEventData {
  'conversation.started': { conversation: ConversationView };
  'message.received': { conversation_id: string; message: MessageView };
  'conversation.closed': { conversation: ConversationView };
  'lead.captured': { conversation_id: string; lead: LeadView };
  'conversation.reopened': { conversation: ConversationView };
  'conversation.status_changed': { conversation: ConversationView; previous_status: string };
  'message.sent': { conversation_id: string; message: MessageView };
}

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

import {
  CLOUDEVENTS_SOURCE,
  type CloudEvent,
  type ConversationView,
  type DomainEventType,
} from '@app/contracts';
import { PUBLIC_EVENT_TYPES } from '@app/dialects';

/**
 * What the AsyncAPI document says about each event type besides its schema (which comes from
 * libs/contracts): the message's component name, a title, the channel's description, a summary
 * and an example. An event type without an entry here fails the type check.
 */
export interface EventMessageDoc<T extends DomainEventType = DomainEventType> {
  component: string;
  title: string;
  description: string;
  summary: string;
  example: { name: string; payload: CloudEvent<T> };
}

const CONVERSATION_ID = '0f6c3c1e-2a7b-4f0e-8a8e-5d9e1c2b3a4d';
const ACCOUNT_ID = 'a8d1b1d2-2f3c-4e5f-9a0b-1c2d3e4f5a6b';
const REQUEST_ID = '8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10';

/** The example conversation's events, in the order they happened. */
function event<T extends DomainEventType>(
  type: T,
  id: string,
  time: string,
  sequence: number,
  data: CloudEvent<T>['data'],
): CloudEvent<T> {
  return {
    specversion: '1.0',
    id,
    source: CLOUDEVENTS_SOURCE,
    type,
    time,
    subject: CONVERSATION_ID,
    datacontenttype: 'application/json',
    accountid: ACCOUNT_ID,
    sequence,
    requestid: REQUEST_ID,
    data,
  };
}

const conversation = (changes: Partial<ConversationView>): ConversationView => ({
  id: CONVERSATION_ID,
  status: 'active',
  visitor: null,
  subject: 'Pricing question',
  metadata: {},
  message_count: 2,
  last_message_at: '2026-11-23T10:16:40.000Z',
  created_at: '2026-11-23T10:15:30.120Z',
  updated_at: '2026-11-23T10:20:00.000Z',
  closed_at: null,
  tags: [],
  ...changes,
});

export const EVENT_MESSAGES: { [T in DomainEventType]: EventMessageDoc<T> } = {
  'conversation.started': {
    component: 'ConversationStarted',
    title: 'Conversation started',
    description: 'A conversation was created.',
    summary: 'A conversation was created (with status active or pending).',
    example: {
      name: 'started',
      payload: event(
        'conversation.started',
        '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
        '2026-11-23T10:15:30.123Z',
        1,
        {
          conversation: conversation({
            visitor: { name: 'Ada', email: 'ada@example.com', phone: null },
            metadata: { page: '/pricing' },
            message_count: 0,
            last_message_at: null,
            updated_at: '2026-11-23T10:15:30.120Z',
          }),
        },
      ),
    },
  },
  'message.received': {
    component: 'MessageReceived',
    title: 'Visitor message received',
    description: 'A visitor sent a message.',
    summary:
      'A message with sender `visitor` was added, including a first message given when the conversation was created (published after its `conversation.started`).',
    example: {
      name: 'received',
      payload: event(
        'message.received',
        '1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6',
        '2026-11-23T10:15:31.004Z',
        2,
        {
          conversation_id: CONVERSATION_ID,
          message: {
            id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
            conversation_id: CONVERSATION_ID,
            sender: 'visitor',
            content: 'Hi, how much is the pro plan?',
            created_at: '2026-11-23T10:15:31.001Z',
          },
        },
      ),
    },
  },
  'conversation.closed': {
    component: 'ConversationClosed',
    title: 'Conversation closed',
    description: 'A conversation was closed.',
    summary: 'An active or pending conversation became closed; `closed_at` is set.',
    example: {
      name: 'closed',
      payload: event(
        'conversation.closed',
        '2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091',
        '2026-11-23T10:20:00.000Z',
        4,
        {
          conversation: conversation({ status: 'closed', closed_at: '2026-11-23T10:20:00.000Z' }),
        },
      ),
    },
  },
  'lead.captured': {
    component: 'LeadCaptured',
    title: 'Lead captured',
    description: "A visitor's contact details were captured.",
    summary: 'Contact details (email or phone, optionally name) were recorded for a conversation.',
    example: {
      name: 'captured',
      payload: event('lead.captured', '3f4e5d6c-7b8a-4998-8a7b-6c5d4e3f2a1b', '2026-11-23T10:16:02.500Z', 6, {
        conversation_id: CONVERSATION_ID,
        lead: {
          id: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
          conversation_id: CONVERSATION_ID,
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          phone: null,
          created_at: '2026-11-23T10:16:02.497Z',
        },
      }),
    },
  },
  'conversation.reopened': {
    component: 'ConversationReopened',
    title: 'Conversation reopened',
    description: 'A closed conversation was reopened.',
    summary: 'A closed conversation became active again; `closed_at` is back to null.',
    example: {
      name: 'reopened',
      payload: event(
        'conversation.reopened',
        '4d5e6f70-8192-4a3b-8c4d-5e6f70819203',
        '2026-11-23T10:20:00.000Z',
        5,
        { conversation: conversation({}) },
      ),
    },
  },
  'conversation.status_changed': {
    component: 'ConversationStatusChanged',
    title: 'Conversation status changed (active <-> pending)',
    description: 'A conversation moved between active and pending.',
    summary:
      'active -> pending or pending -> active. Closing and reopening have their own events (`conversation.closed`, `conversation.reopened`).',
    example: {
      name: 'to pending',
      payload: event(
        'conversation.status_changed',
        '5e6f7081-9203-4b4c-9d5e-6f7081920314',
        '2026-11-23T10:20:00.000Z',
        3,
        { conversation: conversation({ status: 'pending' }), previous_status: 'active' },
      ),
    },
  },
  'conversation.updated': {
    component: 'ConversationUpdated',
    title: 'Conversation subject, visitor, metadata or tags changed',
    description: "A conversation's subject, visitor, metadata or tags changed.",
    summary:
      'PATCH changed the subject, the visitor, the metadata or the tags; `changed` names which, `tags_added` and `tags_removed` what became of the tags. A status move has its own event; a PATCH with values equal to the stored ones emits nothing.',
    example: {
      name: 'subject, metadata and tags changed',
      payload: event(
        'conversation.updated',
        '7a819203-1425-4d6e-9f70-819203142536',
        '2026-11-23T10:21:00.000Z',
        7,
        {
          conversation: conversation({
            status: 'pending',
            subject: 'Pricing question (annual plan)',
            metadata: { plan: 'annual' },
            tags: ['vip'],
            updated_at: '2026-11-23T10:21:00.000Z',
          }),
          changed: ['subject', 'metadata', 'tags'],
          tags_added: ['vip'],
          tags_removed: [],
        },
      ),
    },
  },
  'message.sent': {
    component: 'MessageSent',
    title: 'Agent, bot or system message sent',
    description: 'An agent, bot or system message was added.',
    summary:
      'A message with sender `agent`, `bot` or `system` was added (visitor messages are `message.received`).',
    example: {
      name: 'agent reply',
      payload: event('message.sent', '6f708192-0314-4c5d-8e6f-708192031425', '2026-11-23T10:16:40.002Z', 3, {
        conversation_id: CONVERSATION_ID,
        message: {
          id: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
          conversation_id: CONVERSATION_ID,
          sender: 'agent',
          content: 'The pro plan is 49 EUR a month.',
          created_at: '2026-11-23T10:16:40.000Z',
        },
      }),
    },
  },
  'conversation.deleted': {
    component: 'ConversationDeleted',
    title: 'Conversation deleted',
    description: 'A conversation was deleted with everything stored about it.',
    summary:
      'DELETE removed the conversation, its messages, lead and events (erasure). The event carries the id alone: nothing else of the conversation remains to send. Delete your own copies on receiving it.',
    example: {
      name: 'erasure',
      payload: event(
        'conversation.deleted',
        '8b92a314-2536-4e7f-8a90-92a314253647',
        '2026-11-24T09:00:00.000Z',
        8,
        {
          id: CONVERSATION_ID,
        },
      ),
    },
  },
};

/** The document's tag of an event type: one of the four original public events, or added since. */
export const eventTag = (type: DomainEventType): 'public-event' | 'broker-only' =>
  (PUBLIC_EVENT_TYPES as readonly string[]).includes(type) ? 'public-event' : 'broker-only';

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ALL_STATUS_SPELLINGS, CONVERSATION_STATUSES } from '@app/dialects';
import { EMAIL_MAX_LENGTH, Nullable, Strict, StringEnum, Timestamp, Uuid } from './schema-types';
import { TagList } from './tags';

/**
 * What the conversations service answers: conversations, messages and leads with canonical (en)
 * status values. The gateway renders the same shapes with statuses in the output dialect
 * (`*Response` below), so each shape is written once, parameterised by how a status is spelled.
 */

export const MESSAGE_SENDERS = ['agent', 'visitor', 'bot', 'system'] as const;
export type MessageSender = (typeof MESSAGE_SENDERS)[number];

/** Field limits, in characters (code points). */
export const CONVERSATION_LIMITS = {
  messageContent: 10_000,
  subject: 500,
  visitorName: 200,
  email: EMAIL_MAX_LENGTH,
  phone: 50,
} as const;

const CONVERSATION_ID = Uuid({ examples: ['0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b'] });

export const CanonicalStatus = StringEnum(CONVERSATION_STATUSES, { examples: ['active'] });
/** A status as a response shows it: in the output dialect. */
export const RenderedStatus = StringEnum(ALL_STATUS_SPELLINGS, {
  description: 'In the output dialect.',
  examples: ['active'],
});

export const VisitorView = Strict({
  name: Nullable(Type.String({ examples: ['Ada Lovelace'] })),
  email: Nullable(Type.String({ examples: ['ada@example.com'] })),
  phone: Nullable(Type.String({ examples: ['+44 20 7946 0958'] })),
});
export type VisitorView = Static<typeof VisitorView>;

export const MessageView = Strict({
  id: Uuid({ examples: ['5d3b1f0e-9a47-4c2e-8f61-2b7d9c0a4e15'] }),
  conversation_id: CONVERSATION_ID,
  sender: StringEnum(MESSAGE_SENDERS, { examples: ['visitor'] }),
  content: Type.String({ examples: ['Where is my parcel?'] }),
  created_at: Timestamp(),
});
export type MessageView = Static<typeof MessageView>;

/**
 * `tags` is in every conversation this release writes. Between services (replies and events) it is
 * optional, so that a reader of the release before tags, which validates strictly, accepts it.
 */
const AlwaysTags = TagList();
const TagsSinceTheyExist = Type.Optional(
  TagList({ description: `${AlwaysTags.description} Always present since tags exist.` }),
);

const conversationFields = <S extends TSchema, T extends TSchema>(status: S, tags: T) => ({
  id: CONVERSATION_ID,
  status,
  visitor: Nullable(VisitorView),
  subject: Nullable(Type.String({ examples: ['Order 1001'] })),
  metadata: Type.Object({}, { additionalProperties: true, examples: [{ order: '1001', channel: 'web' }] }),
  message_count: Type.Integer({ minimum: 0, examples: [2] }),
  last_message_at: Nullable(Timestamp()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  closed_at: Nullable(Timestamp(), { examples: [null] }),
  // Last: a serializer writes optional fields after the required ones, so in every schema here it
  // is in the same place (the JSON Postgres writes too, conversations.sql.ts).
  tags,
});

const conversationWithMessages = <S extends TSchema, T extends TSchema>(status: S, tags: T) =>
  Strict({
    ...conversationFields(status, tags),
    messages: Type.Array(MessageView, { description: 'Every message, oldest first.' }),
  });

export const ConversationView = Strict(conversationFields(CanonicalStatus, TagsSinceTheyExist));
export type ConversationView = Static<typeof ConversationView>;
export const ConversationWithMessagesView = conversationWithMessages(CanonicalStatus, TagsSinceTheyExist);
export type ConversationWithMessagesView = Static<typeof ConversationWithMessagesView>;

export const ConversationResponse = Strict(conversationFields(RenderedStatus, AlwaysTags));
/** A conversation in an event's data as shown: stored events written before tags have none. */
export const ConversationEventResponse = Strict(conversationFields(RenderedStatus, TagsSinceTheyExist));
export const ConversationWithMessagesResponse = conversationWithMessages(RenderedStatus, AlwaysTags);

const pageFields = {
  limit: Type.Integer({ minimum: 1, maximum: 100, examples: [20] }),
  offset: Type.Integer({ minimum: 0, examples: [0] }),
  total: Type.Integer({
    minimum: 0,
    description: 'Conversations matching the filter as of the snapshot.',
    examples: [57],
  }),
  total_is_lower_bound: Type.Optional(
    Type.Literal(true, {
      description:
        'Present (and true) only when `total` is a lower bound: a list filtered by `q` or `tag` counts its matches only so far past the page (docs: "Search and tags"), and there are more. Absent from other lists.',
    }),
  ),
  snapshot: Type.String({
    description:
      'Opaque token of the moment the first page was read. Pass it back as `snapshot` (as `next` does) to page through a list that does not shift while others create conversations.',
    examples: ['NzY4Ojc3MDo3Njk'],
  }),
};

export const ConversationPage = Strict({
  data: Type.Array(ConversationView),
  pagination: Strict(pageFields),
});
export type ConversationPage = Static<typeof ConversationPage>;

export const ConversationListResponse = Strict({
  data: Type.Array(ConversationResponse),
  pagination: Strict({
    ...pageFields,
    next: Nullable(Type.String(), {
      description: 'Path of the next page (same snapshot), or null on the last page.',
      examples: ['/v1/conversations?limit=20&offset=20&snapshot=NzY4Ojc3MDo3Njk'],
    }),
  }),
});

/** A page of messages between services: the page and the position to continue after, if any. */
export const MessagePage = Strict({
  data: Type.Array(MessageView),
  nextAfterPosition: Nullable(Type.Integer()),
});
export type MessagePage = Static<typeof MessagePage>;

export const MessagePageResponse = Strict({
  data: Type.Array(MessageView),
  pagination: Strict({
    limit: Type.Integer({ minimum: 1, maximum: 100, examples: [20] }),
    next: Nullable(Type.String(), {
      description: 'Pass as `after` for the next page; null on the last page.',
      examples: ['bTo0MA'],
    }),
  }),
});

export const LeadView = Strict({
  id: Uuid({ examples: ['c7a1d9e2-3b4f-4e5a-9c6d-7e8f9a0b1c2d'] }),
  conversation_id: CONVERSATION_ID,
  name: Nullable(Type.String({ examples: ['Ada Lovelace'] })),
  email: Nullable(Type.String({ examples: ['ada@example.com'] })),
  phone: Nullable(Type.String(), { examples: [null] }),
  created_at: Timestamp(),
});
export type LeadView = Static<typeof LeadView>;

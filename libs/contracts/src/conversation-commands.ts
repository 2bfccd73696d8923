import { Type, type Static } from '@sinclair/typebox';
import type { ConversationStatus } from '@app/dialects';
import {
  CanonicalStatus,
  CONVERSATION_LIMITS,
  ConversationPage,
  ConversationView,
  ConversationWithMessagesView,
  LeadView,
  MESSAGE_SENDERS,
  MessagePage,
  MessageView,
} from './conversation-views';
import { rpcOperation, rpcQuery } from './rpc-envelope';
import { Email, Integer, Metadata, Nullable, Strict, StringEnum, Text, Uuid } from './schema-types';
import { TAG_LIMITS, TagListInput } from './tags';

/**
 * The commands and queries the conversations service answers over RabbitMQ, and the input fields
 * they share with the HTTP bodies (conversation-requests.ts). Values are canonical (en).
 */

export const PAGE_SIZE = { default: 20, max: 100 } as const;
/**
 * `q`'s length, in characters; words shorter than `minWordLength` are ignored. A list filtered by
 * `q` or `tag` counts its matches exactly up to `countAhead` past the page's end; beyond, its
 * total is that bound, flagged `total_is_lower_bound`. Its first page of common matches is read
 * from the newest (or oldest) `walk` conversations when they hold it (docs/conversations.md).
 */
export const SEARCH_LIMITS = { queryLength: 200, minWordLength: 2, countAhead: 100, walk: 20_000 } as const;
const SEARCH_WORD = new RegExp(`[\\p{L}\\p{N}]{${SEARCH_LIMITS.minWordLength}}`, 'u');
/** Whether `q` has a word to search for; one that has none (`a b`) searches for nothing and filters nothing. */
export const hasSearchWord = (q: string): boolean => SEARCH_WORD.test(q);
export const MAX_OFFSET = 1_000_000_000;

export const visitorInputFields = {
  name: Type.Optional(
    Nullable(Text({ maxLength: CONVERSATION_LIMITS.visitorName, examples: ['Ada Lovelace'] })),
  ),
  email: Type.Optional(Nullable(Email({ examples: ['ada@example.com'] }))),
  phone: Type.Optional(
    Nullable(Text({ maxLength: CONVERSATION_LIMITS.phone, examples: ['+44 20 7946 0958'] })),
  ),
};
export const VisitorInput = Strict(visitorInputFields);

export const messageInputFields = {
  content: Text({
    minLength: 1,
    maxLength: CONVERSATION_LIMITS.messageContent,
    examples: ['Hello! How can I help you today?'],
  }),
  sender: StringEnum(MESSAGE_SENDERS, { examples: ['agent'] }),
};
export const MessageInput = Strict(messageInputFields);
export type NewMessage = Static<typeof MessageInput>;

/** What a new conversation may start with, besides its status. */
export const newConversationFields = {
  visitor: Type.Optional(Nullable(VisitorInput)),
  subject: Type.Optional(
    Nullable(Text({ maxLength: CONVERSATION_LIMITS.subject, examples: ['Question about my order'] })),
  ),
  metadata: Type.Optional(Metadata({ examples: [{ order_id: 'A-1001' }] })),
  tags: Type.Optional(
    TagListInput({
      description: `Tags: each trimmed, lower-cased and NFC, 1-${TAG_LIMITS.length} characters; at most ${TAG_LIMITS.perConversation}; duplicates count once.`,
      examples: [['vip', 'billing']],
    }),
  ),
  message: Type.Optional(
    Strict(messageInputFields, { description: 'A first message; a visitor one emits message.received.' }),
  ),
};

/** A lead needs an email or a phone (either may be null when the other is given). */
export const EMAIL_OR_PHONE = {
  anyOf: [
    { required: ['email'], properties: { email: { type: 'string', minLength: 1 } } },
    { required: ['phone'], properties: { phone: { type: 'string', minLength: 1 } } },
  ],
  'x-error': { field: 'email', message: 'email or phone is required' },
};

/** A conversation id; one that is not a UUID names nothing: a 404 like an unknown id. */
export const ConversationId = Uuid({
  'x-not-found': 'Conversation',
  examples: ['0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b'],
});
const conversationId = ConversationId;

/** Filters and order of the conversation list besides `status` (docs/conversations.md). */
export const listFilterFields = {
  created_after: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Only conversations created after this instant (ISO 8601 with an offset, exclusive).',
      examples: ['2026-11-01T00:00:00Z'],
    }),
  ),
  created_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Only conversations created before this instant (exclusive).',
      examples: ['2026-12-01T00:00:00+01:00'],
    }),
  ),
  updated_after: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'Only conversations changed after this instant (exclusive): what changed since a last sync.',
      examples: ['2026-11-23T12:00:00Z'],
    }),
  ),
  visitor_email: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: CONVERSATION_LIMITS.email,
      description: 'Only conversations whose visitor has this email (exact, case aside).',
      examples: ['ada@example.com'],
    }),
  ),
  order: Type.Optional(
    StringEnum(['desc', 'asc'] as const, {
      description: 'By creation time: `desc` (newest first, the default) or `asc`.',
    }),
  ),
  q: Type.Optional(
    Text({
      maxLength: SEARCH_LIMITS.queryLength,
      description:
        "Search: only conversations where every word of `q` (words of one character aside) starts a word of the subject, the visitor's name or email, or a message, case and diacritics aside (`zolw` finds `Żółw`). Aliases `cari`, `szukaj`.",
      examples: ['parcel 1001'],
    }),
  ),
};

export const ListConversationsQuery = Strict({
  limit: Integer(1, PAGE_SIZE.max),
  offset: Integer(0, MAX_OFFSET),
  status: Type.Optional(CanonicalStatus),
  ...listFilterFields,
  /** Tags every conversation listed has (normalised). */
  tag: Type.Optional(TagListInput({ minItems: 1 })),
  /** A sealed snapshot token (see list-snapshot.ts): rows created by transactions it does not see are hidden. */
  snapshot: Type.Optional(Type.String({ maxLength: 4096 })),
});
export type ListConversationsQuery = Static<typeof ListConversationsQuery>;

export const GetConversationQuery = Strict({ conversationId });

/** A page of a conversation's messages: positions after (asc) or before (desc) `afterPosition`. */
export const ListMessagesQuery = Strict({
  conversationId,
  limit: Integer(1, PAGE_SIZE.max),
  order: StringEnum(['asc', 'desc'] as const),
  afterPosition: Type.Optional(Integer(-1, 2_147_483_647)),
});
export type ListMessagesQuery = Static<typeof ListMessagesQuery>;

/** The statuses a conversation may start in (`active` when none is given). */
export const CREATE_STATUSES = ['active', 'pending'] as const satisfies readonly ConversationStatus[];
export type CreateStatus = (typeof CREATE_STATUSES)[number];

export const CreateConversationCommand = Strict({
  ...newConversationFields,
  status: Type.Optional(StringEnum(CREATE_STATUSES)),
});
export type CreateConversationCommand = Static<typeof CreateConversationCommand>;

export const SendMessageCommand = Strict({ conversationId, ...messageInputFields });
export type SendMessageCommand = Static<typeof SendMessageCommand>;

/**
 * What PATCH may change, besides the status: the subject, the visitor (replaced whole; null clears
 * it) and metadata (merged into the stored object; a key set to null is removed).
 */
export const editableFields = {
  subject: newConversationFields.subject,
  visitor: newConversationFields.visitor,
  metadata: Type.Optional(
    Metadata({
      description:
        'Merged into the stored metadata: keys given replace theirs, a key set to null is removed, others stay. The result keeps the metadata limits.',
      examples: [{ order_id: 'A-1002', coupon: null }],
    }),
  ),
  tags: Type.Optional(
    TagListInput({
      description: 'Replaces the set of tags (`[]` removes them all). Not with `add_tags` or `remove_tags`.',
      examples: [['vip', 'billing']],
    }),
  ),
  add_tags: Type.Optional(
    TagListInput({
      description: `Tags to add to the set, whatever another request changes at the same time; the set keeps at most ${TAG_LIMITS.perConversation}.`,
      examples: [['refund']],
    }),
  ),
  remove_tags: Type.Optional(
    TagListInput({
      description: 'Tags to remove from the set (one it does not hold is no error).',
      examples: [['vip']],
    }),
  ),
};

/**
 * An object that holds `field`. Spelled with `type: 'object'` because `required` alone holds for
 * any value that is not an object, so a rule built on it would also fire (and report a second
 * error) for a body that is not an object at all, which gets only its `body` error.
 */
const holding = (field: string) => ({ type: 'object', required: [field], properties: { [field]: {} } });

/** `tags` replaces the set; `add_tags` and `remove_tags` edit it: one request does one or the other. */
export const TAGS_OR_TAG_EDITS = {
  anyOf: [{ not: holding('tags') }, { not: { anyOf: [holding('add_tags'), holding('remove_tags')] } }],
  'x-error': { field: 'tags', message: 'cannot be given with add_tags or remove_tags' },
};

export const UpdateConversationCommand = Strict(
  { conversationId, status: Type.Optional(CanonicalStatus), ...editableFields },
  TAGS_OR_TAG_EDITS,
);
export type UpdateConversationCommand = Static<typeof UpdateConversationCommand>;

export const CaptureLeadCommand = Strict({ conversationId, ...visitorInputFields }, EMAIL_OR_PHONE);
export type CaptureLeadCommand = Static<typeof CaptureLeadCommand>;

export const DeleteConversationCommand = Strict({ conversationId });
export type DeleteConversationCommand = Static<typeof DeleteConversationCommand>;

/** What a deletion answers: the id of the conversation that is gone. */
export const DeletedConversation = Strict({ id: Type.String({ format: 'uuid' }) });
export type DeletedConversation = Static<typeof DeletedConversation>;

/** Every operation of the conversations service: pattern, command schema, reply schema. */
export const ConversationRpc = {
  list: rpcQuery('conversations.list', ListConversationsQuery, ConversationPage),
  get: rpcQuery('conversations.get', GetConversationQuery, ConversationWithMessagesView),
  create: rpcOperation('conversations.create', CreateConversationCommand, ConversationView),
  sendMessage: rpcOperation('conversations.send-message', SendMessageCommand, MessageView),
  update: rpcOperation('conversations.update', UpdateConversationCommand, ConversationView),
  captureLead: rpcOperation('conversations.capture-lead', CaptureLeadCommand, LeadView),
  delete: rpcOperation('conversations.delete', DeleteConversationCommand, DeletedConversation),
  getLead: rpcQuery('conversations.get-lead', GetConversationQuery, LeadView),
  listMessages: rpcQuery('conversations.list-messages', ListMessagesQuery, MessagePage),
};

import { Type, type SchemaOptions, type Static } from '@sinclair/typebox';
import { CONVERSATION_STATUSES, type ConversationStatus, DIALECTS, STATUS_NAMES } from '@app/dialects';
import {
  CREATE_STATUSES,
  editableFields,
  listFilterFields,
  EMAIL_OR_PHONE,
  MAX_OFFSET,
  MessageInput,
  newConversationFields,
  PAGE_SIZE,
  TAGS_OR_TAG_EDITS,
  visitorInputFields,
} from './conversation-commands';
import { Integer, Strict, StringEnum } from './schema-types';
import { TagListInput } from './tags';

/**
 * The public API's request bodies and query parameters for conversations. Status values may be
 * spelled in any dialect (docs/dialects.md); the gateway translates them to the canonical
 * commands of conversation-commands.ts.
 */

/**
 * A status in any dialect, case and spacing aside (`Belum  Selesai` is `belum selesai`), limited
 * to `allowed` (the `x-status-of` keyword of schema-validation.ts).
 */
export const StatusInput = (allowed: readonly ConversationStatus[], options: SchemaOptions = {}) =>
  Type.Unsafe<string>({
    type: 'string',
    maxLength: 50,
    'x-status-of': [...allowed],
    examples: allowed.flatMap((status) => DIALECTS.map((dialect) => STATUS_NAMES[status][dialect])),
    ...options,
  });

export const CreateConversationBody = Strict({
  ...newConversationFields,
  status: Type.Optional(
    StatusInput(CREATE_STATUSES, {
      description: `Initial status, in any dialect: ${CREATE_STATUSES.map(
        (status) =>
          `${status} (${DIALECTS.filter((dialect) => dialect !== 'en')
            .map((dialect) => STATUS_NAMES[status][dialect])
            .join(', ')})`,
      ).join(' or ')}. Default active.`,
    }),
  ),
});
export type CreateConversationBody = Static<typeof CreateConversationBody>;

export const SendMessageBody = MessageInput;

export const UpdateConversationBody = Strict(
  {
    status: Type.Optional(
      StatusInput(CONVERSATION_STATUSES, { description: 'Target status, in any dialect.' }),
    ),
    ...editableFields,
  },
  {
    ...TAGS_OR_TAG_EDITS,
    minProperties: 1,
    description: 'At least one of status, subject, visitor, metadata, tags, add_tags and remove_tags.',
    examples: [{ subject: 'Order 1001 (refund)', metadata: { refund: '12.50 EUR' }, add_tags: ['refund'] }],
  },
);
export type UpdateConversationBody = Static<typeof UpdateConversationBody>;

export const CaptureLeadBody = Strict(visitorInputFields, {
  ...EMAIL_OR_PHONE,
  description: "The visitor's contact details: an email or a phone is required.",
});

/** `limit` and `offset`, canonical names (their other spellings: LIST_QUERY_ALIASES). */
export const pageParams = {
  limit: Type.Optional(
    Integer(1, PAGE_SIZE.max, { default: PAGE_SIZE.default, description: 'Page size (alias `had`).' }),
  ),
  offset: Type.Optional(
    Integer(0, MAX_OFFSET, {
      default: 0,
      description: 'Rows to skip (aliases `mengimbangi`, `przesunięcie`).',
    }),
  ),
};

export const ListConversationsParams = Strict({
  ...pageParams,
  status: Type.Optional(
    StatusInput(CONVERSATION_STATUSES, { description: 'Filter, in any dialect (alias `stan`).' }),
  ),
  ...listFilterFields,
  tag: Type.Optional(
    TagListInput({
      minItems: 1,
      description:
        'Only conversations with this tag; repeat it for several (all must be present). Alias `etykieta`.',
      examples: [['vip']],
    }),
  ),
  snapshot: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description: '`pagination.snapshot` of the first page: later pages are read as of that moment.',
    }),
  ),
});
export type ListConversationsParams = Static<typeof ListConversationsParams>;

/** A messages page's `after` cursor, sealed by the gateway (59 characters at most). */
export const MESSAGE_CURSOR = Type.String({
  minLength: 1,
  maxLength: 64,
  description: '`pagination.next` of the previous page: the page after it.',
});

export const ListMessagesParams = Strict({
  limit: Type.Optional(Integer(1, PAGE_SIZE.max, { description: 'Page size, default 20 (alias `had`).' })),
  after: Type.Optional(MESSAGE_CURSOR),
  order: Type.Optional(
    StringEnum(['asc', 'desc'] as const, { description: '`asc` (oldest first, the default) or `desc`.' }),
  ),
});
export type ListMessagesParams = Static<typeof ListMessagesParams>;

import { Type, type SchemaOptions } from '@sinclair/typebox';

/**
 * Conversation tags: a set of short labels, each stored trimmed, lower-cased and in Unicode NFC, so
 * `VIP`, ` vip ` and `vip` are one tag, and `café` typed with a combining accent is the `café`
 * typed with a precomposed one. Lengths are in characters (code points), counted once normalised.
 */
export const TAG_LIMITS = { length: 50, perConversation: 20 } as const;

/** A tag as it is stored and compared. */
export const normalizeTag = (tag: string): string => tag.trim().toLowerCase().normalize('NFC');

/** Tags as a set: each normalised, duplicates merged, in the order first given. */
export const normalizeTags = (tags: readonly string[]): string[] => [...new Set(tags.map(normalizeTag))];

const CONTROL =
  // eslint-disable-next-line no-control-regex -- control characters are exactly what a tag may not hold.
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What a tag must be, as a validation error says it. */
export const TAG_RULE = `must be 1 to ${TAG_LIMITS.length} characters long once trimmed, without control characters`;

/** Whether `tag` can be a tag (TAG_RULE). */
export function isTag(tag: string): boolean {
  const length = [...normalizeTag(tag)].length;
  return !CONTROL.test(tag) && length >= 1 && length <= TAG_LIMITS.length;
}

/** One tag as a client writes it (the `x-tag` keyword of schema-validation.ts applies isTag). */
export const TagInput = (options: SchemaOptions = {}) =>
  Type.String({
    // Bounds the raw text (surrounding spaces included); the normalised tag is held to TAG_LIMITS.
    maxLength: 4 * TAG_LIMITS.length,
    'x-tag': true,
    examples: ['vip'],
    ...options,
  });

/** A list of tags as a client writes it: duplicates (once normalised) count once. */
export const TagListInput = (options: SchemaOptions = {}) =>
  Type.Array(TagInput(), { maxItems: TAG_LIMITS.perConversation, ...options });

/** A conversation's tags as the API shows them. */
export const TagList = (options: SchemaOptions = {}) =>
  Type.Array(Type.String({ minLength: 1, maxLength: TAG_LIMITS.length, examples: ['vip'] }), {
    maxItems: TAG_LIMITS.perConversation,
    description: `The conversation's tags: each trimmed, lower-cased and NFC, 1-${TAG_LIMITS.length} characters, at most ${TAG_LIMITS.perConversation}, no duplicates, in the order they were added.`,
    examples: [['vip', 'billing']],
    ...options,
  });

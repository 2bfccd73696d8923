import { z } from 'zod';
import { CONVERSATION_STATUSES } from '@app/dialects';
import {
  isSnapshotToken,
  isStorableJson,
  isStorableText,
  MESSAGE_CONTENT_MAX,
  MESSAGE_SENDERS,
} from '@app/contracts';
import { DomainError } from '@app/errors';

/**
 * The conversations service validates every payload again, whoever sent it: the gateway is not
 * the only publisher a queue can have.
 */
const uuid = z.string().uuid();
/** Lengths in characters (code points), as the gateway and the OpenAPI document count them. */
const characters = (min: number, max: number) =>
  z
    .string()
    .refine((value) => {
      const length = [...value].length;
      return length >= min && length <= max;
    }, `must be ${min} to ${max} characters long`)
    .refine(isStorableText, 'must not contain NUL characters or unpaired surrogates');
const text = (max: number) => characters(0, max).nullable().optional();
const message = z.object({ content: characters(1, MESSAGE_CONTENT_MAX), sender: z.enum(MESSAGE_SENDERS) });

export const commandSchemas = {
  list: z.object({
    limit: z.number().int().min(1).max(100),
    offset: z.number().int().min(0),
    status: z.enum(CONVERSATION_STATUSES).optional(),
    snapshot: z.string().refine(isSnapshotToken, 'must be a pagination.snapshot token').optional(),
  }),
  get: z.object({ conversationId: uuid }),
  create: z.object({
    visitor: z
      .object({ name: text(200), email: text(320), phone: text(50) })
      .nullable()
      .optional(),
    subject: text(500),
    metadata: z
      .record(z.unknown())
      .refine(isStorableJson, 'must not contain NUL characters or unpaired surrogates')
      .optional(),
    status: z.enum(['active', 'pending']).optional(),
    message: message.optional(),
  }),
  sendMessage: message.extend({ conversationId: uuid }),
  changeStatus: z.object({ conversationId: uuid, status: z.enum(CONVERSATION_STATUSES) }),
  captureLead: z
    .object({
      conversationId: uuid,
      name: text(200),
      email: z.string().email().max(320).refine(isStorableText).nullable().optional(),
      phone: text(50),
    })
    .refine((lead) => Boolean(lead.email || lead.phone), 'email or phone is required'),
};

/** Parses a payload or throws the 400 the gateway would have given. */
export function parsePayload<T>(schema: z.ZodType<T>, payload: unknown): T {
  const result = schema.safeParse(payload);
  if (result.success) return result.data;
  throw DomainError.validation(
    result.error.issues.map((issue) => ({ field: issue.path.join('.') || 'body', message: issue.message })),
  );
}

/** A conversation id that is not a UUID cannot exist: it is a 404 like any other missing id. */
export function isUuid(value: unknown): boolean {
  return uuid.safeParse(value).success;
}

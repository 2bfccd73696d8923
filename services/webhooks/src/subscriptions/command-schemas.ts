import { z } from 'zod';
import { ALL_EVENTS, DELIVERY_STATUSES, isStorableText, SUBSCRIPTION_STATUSES } from '@app/contracts';
import { DIALECTS, PUBLIC_EVENT_TYPES } from '@app/dialects';
import { DomainError } from '@app/errors';

/**
 * The webhooks service validates every payload again, whoever sent it. Event names arrive
 * canonical (the gateway translates dialects); the URL's reachability is checked by TargetPolicy.
 */
export const URL_MAX = 2048;
export const DESCRIPTION_MAX = 500;
export const EVENTS_MAX = 20;

const uuid = z.string().uuid();
const events = z
  .array(z.union([z.literal(ALL_EVENTS), z.enum(PUBLIC_EVENT_TYPES)]))
  .min(1)
  .max(EVENTS_MAX);
const description = z
  .string()
  .max(DESCRIPTION_MAX)
  .refine(isStorableText, 'must not contain NUL characters or unpaired surrogates')
  .nullable()
  .optional();
const url = z.string().min(1).max(URL_MAX);
const page = { limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) };

export const commandSchemas = {
  create: z.object({
    url,
    events,
    dialect: z.enum(DIALECTS).optional(),
    description,
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
  }),
  update: z.object({
    webhookId: uuid,
    url: url.optional(),
    events: events.optional(),
    dialect: z.enum(DIALECTS).optional(),
    description,
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
  }),
  ref: z.object({ webhookId: uuid }),
  list: z.object(page),
  listDeliveries: z.object({ webhookId: uuid, status: z.enum(DELIVERY_STATUSES).optional(), ...page }),
  deliveryRef: z.object({ webhookId: uuid, deliveryId: uuid }),
};

/** Parses a payload or throws the 400 the gateway would have given. */
export function parsePayload<T>(schema: z.ZodType<T>, payload: unknown): T {
  const result = schema.safeParse(payload);
  if (result.success) return result.data;
  throw DomainError.validation(
    result.error.issues.map((issue) => ({ field: issue.path.join('.') || 'body', message: issue.message })),
  );
}

/** `*` covers everything; otherwise each type once, in a stable order. */
export function normaliseEvents<T extends string>(list: T[]): T[] {
  if (list.includes(ALL_EVENTS as T)) return [ALL_EVENTS as T];
  return [...new Set(list)].sort();
}

export const isUuid = (value: unknown): boolean => uuid.safeParse(value).success;

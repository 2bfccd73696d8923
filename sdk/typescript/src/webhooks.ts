import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './generated/openapi';

type Event = components['schemas']['Event'];

/**
 * A webhook's body: the event's `type` (in the subscription's dialect), `timestamp`, `sequence`
 * and `data`, a union discriminated by `type` like the events API's.
 */
export type WebhookEvent = WebhookEventOf<Event>;
type WebhookEventOf<E> = E extends Event
  ? { type: E['type']; timestamp: string; sequence?: number; data: E['data'] }
  : never;

/** Request headers as Node's http module gives them, as a plain object, or a fetch `Headers`. */
export type WebhookHeaders =
  Record<string, string | string[] | undefined> | { get(name: string): string | null };

/** Why a webhook was refused: a header missing, a timestamp too far from now, no signature verifying. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const SECRET_PREFIX = 'whsec_';
/** How far a webhook's timestamp may be from now (Standard Webhooks' recommendation). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Verifies a Standard Webhooks request signed with `secret` (`whsec_...`, as the API shows it):
 * `webhook-signature` must hold a `v1,` HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`
 * (any one of several, during a secret rotation) and the timestamp be within 5 minutes of now.
 * `rawBody` is the body exactly as received (parse it only afterwards). Returns the parsed event;
 * throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  { now = new Date(), toleranceSeconds = WEBHOOK_TOLERANCE_SECONDS } = {},
): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  }
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() / 1000 - seconds) > toleranceSeconds) {
    throw new WebhookVerificationError('webhook-timestamp is not within the tolerance of now');
  }
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  const verified = signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!verified) throw new WebhookVerificationError('no signature matches the secret');
  return JSON.parse(body) as WebhookEvent;
}

/**
 * The three renderings of the API (docs/dialects.md). `en` is canonical: it is what the
 * services store, what travels over RabbitMQ and what routing keys use. The other two exist only
 * at the edges (gateway input/output, webhook payloads).
 */
export const DIALECTS = ['en', 'ms', 'pl'] as const;
export type Dialect = (typeof DIALECTS)[number];

export const CONVERSATION_STATUSES = ['active', 'closed', 'pending'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

export const STATUS_NAMES: Record<ConversationStatus, Record<Dialect, string>> = {
  active: { en: 'active', ms: 'aktif', pl: 'aktywne' },
  closed: { en: 'closed', ms: 'ditutup', pl: 'zamknięte' },
  pending: { en: 'pending', ms: 'belum selesai', pl: 'w toku' },
};

/**
 * The four public event types the API started with: what a webhook subscription's `*`
 * stands for (docs/webhooks.md), so subscribers of `*` never receive a type they did not expect.
 */
export const PUBLIC_EVENT_TYPES = [
  'conversation.started',
  'message.received',
  'conversation.closed',
  'lead.captured',
] as const;
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

/**
 * Every event type (docs/events.md): the public four, then those added since, which a
 * subscription names explicitly. The events API and the stream carry all of them.
 */
export const EVENT_TYPES = [
  ...PUBLIC_EVENT_TYPES,
  'conversation.reopened',
  'conversation.status_changed',
  'message.sent',
  'conversation.updated',
  'conversation.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Event names per dialect. The added ones follow the first four: Malay `perbualan`/`mesej` with
 * a `di-` passive verb, Polish `rozmowa`/`wiadomość` with a past participle agreeing in gender; a
 * two-word name keeps English's underscore (`status_changed`: `status_berubah`, `stan_zmieniony`,
 * with the Polish API's own word for status).
 */
export const EVENT_NAMES: Record<EventType, Record<Dialect, string>> = {
  'conversation.started': { en: 'conversation.started', ms: 'perbualan.dimulakan', pl: 'rozmowa.rozpoczęta' },
  'message.received': { en: 'message.received', ms: 'mesej.diterima', pl: 'wiadomość.odebrana' },
  'conversation.closed': { en: 'conversation.closed', ms: 'perbualan.tertutup', pl: 'rozmowa.zamknięta' },
  'lead.captured': { en: 'lead.captured', ms: 'memimpin.ditawan', pl: 'lead.captured' },
  'conversation.reopened': {
    en: 'conversation.reopened',
    ms: 'perbualan.dibuka_semula',
    pl: 'rozmowa.wznowiona',
  },
  'conversation.status_changed': {
    en: 'conversation.status_changed',
    ms: 'perbualan.status_berubah',
    pl: 'rozmowa.stan_zmieniony',
  },
  'message.sent': { en: 'message.sent', ms: 'mesej.dihantar', pl: 'wiadomość.wysłana' },
  'conversation.updated': {
    en: 'conversation.updated',
    ms: 'perbualan.dikemas_kini',
    pl: 'rozmowa.zaktualizowana',
  },
  'conversation.deleted': {
    en: 'conversation.deleted',
    ms: 'perbualan.dipadam',
    pl: 'rozmowa.usunięta',
  },
};

export const PLANS = ['trial', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

export const PLAN_NAMES: Record<Plan, readonly string[]> = {
  trial: ['trial', 'Percubaan', 'Wersja próbna'],
  pro: ['pro'],
  business: ['business'],
};

/** Query parameter spellings, canonical name first. */
export const LIST_QUERY_ALIASES = {
  limit: ['limit', 'had'],
  offset: ['offset', 'mengimbangi', 'przesunięcie'],
  status: ['status', 'stan'],
  tag: ['tag', 'etykieta'],
  q: ['q', 'cari', 'szukaj'],
} as const;

/** Path segments (docs/dialects.md). Polish is sent percent-encoded by clients. */
export const COLLECTION_SEGMENTS = ['conversations', 'rozmowy'] as const;
export const MESSAGES_SEGMENTS = ['messages', 'wiadomości'] as const;

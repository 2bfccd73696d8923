/**
 * The three renderings of the API (DESIGN.md, "Dialects"). `en` is canonical: it is what the
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

/** The four public event types of the interface (section 6); webhooks subscribe to these. */
export const PUBLIC_EVENT_TYPES = [
  'conversation.started',
  'message.received',
  'conversation.closed',
  'lead.captured',
] as const;
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

export const EVENT_NAMES: Record<PublicEventType, Record<Dialect, string>> = {
  'conversation.started': { en: 'conversation.started', ms: 'perbualan.dimulakan', pl: 'rozmowa.rozpoczęta' },
  'message.received': { en: 'message.received', ms: 'mesej.diterima', pl: 'wiadomość.odebrana' },
  'conversation.closed': { en: 'conversation.closed', ms: 'perbualan.tertutup', pl: 'rozmowa.zamknięta' },
  'lead.captured': { en: 'lead.captured', ms: 'memimpin.ditawan', pl: 'lead.captured' },
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
} as const;
export type ListQueryParam = keyof typeof LIST_QUERY_ALIASES;

/** Path segments (the interface's section 4). Polish is sent percent-encoded by clients. */
export const COLLECTION_SEGMENTS = ['conversations', 'rozmowy'] as const;
export const MESSAGES_SEGMENTS = ['messages', 'wiadomości'] as const;

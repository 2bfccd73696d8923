import {
  ConversationStatus,
  CONVERSATION_STATUSES,
  Dialect,
  DIALECTS,
  EVENT_NAMES,
  Plan,
  PLANS,
  PLAN_NAMES,
  EventType,
  EVENT_TYPES,
  PublicEventType,
  PUBLIC_EVENT_TYPES,
  STATUS_NAMES,
} from './dialect-tables';

/** Lower-cases and collapses whitespace so `Belum  Selesai` and `belum selesai` are one value. */
function normalise(value: string): string {
  return value.normalize('NFC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('en');
}

function reverseIndex<K extends string>(keys: readonly K[], spellings: (key: K) => readonly string[]) {
  const index = new Map<string, K>();
  for (const key of keys) for (const spelling of spellings(key)) index.set(normalise(spelling), key);
  return index;
}

const statusIndex = reverseIndex(CONVERSATION_STATUSES, (s) => Object.values(STATUS_NAMES[s]));
const eventIndex = reverseIndex(EVENT_TYPES, (e) => Object.values(EVENT_NAMES[e]));
const planIndex = reverseIndex(PLANS, (p) => PLAN_NAMES[p]);

export const parseStatus = (value: string): ConversationStatus | undefined =>
  statusIndex.get(normalise(value));
export const parseEventType = (value: string): EventType | undefined => eventIndex.get(normalise(value));
export const parsePlan = (value: string): Plan | undefined => planIndex.get(normalise(value));

export const renderStatus = (status: ConversationStatus, dialect: Dialect): string =>
  STATUS_NAMES[status][dialect];
export const renderEventType = (type: EventType, dialect: Dialect): string => EVENT_NAMES[type][dialect];

/** Every accepted spelling of every status, for error messages and OpenAPI enums. */
export const ALL_STATUS_SPELLINGS: string[] = CONVERSATION_STATUSES.flatMap((s) =>
  DIALECTS.map((d) => STATUS_NAMES[s][d]),
).filter((v, i, all) => all.indexOf(v) === i);

/** Every spelling of every event type, for error messages and OpenAPI enums. */
export const EVENT_SPELLINGS: string[] = EVENT_TYPES.flatMap((e) =>
  DIALECTS.map((d) => EVENT_NAMES[e][d]),
).filter((v, i, all) => all.indexOf(v) === i);

export const isEventType = (value: string): value is EventType =>
  (EVENT_TYPES as readonly string[]).includes(value);

/** One of the interface's four public event types (what a webhook subscription's `*` stands for). */
export const isPublicEventType = (value: string): value is PublicEventType =>
  (PUBLIC_EVENT_TYPES as readonly string[]).includes(value);

export const isDialect = (value: unknown): value is Dialect =>
  typeof value === 'string' && (DIALECTS as readonly string[]).includes(value);

/**
 * Output dialect (DESIGN.md): an explicit `Accept-Language` of en, ms or pl wins (highest q first);
 * otherwise `pl` under the Polish collection path, else `en`.
 */
export function negotiateDialect(acceptLanguage: string | undefined, path: string): Dialect {
  if (acceptLanguage) {
    const ranked = acceptLanguage
      .split(',')
      .map((part, position) => {
        const [tag, ...params] = part.trim().split(';');
        const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
        return { language: tag.trim().toLowerCase().split('-')[0], q: q ? Number(q.slice(2)) : 1, position };
      })
      .filter((entry) => isDialect(entry.language) && entry.q > 0)
      .sort((a, b) => b.q - a.q || a.position - b.position);
    if (ranked.length > 0) return ranked[0].language as Dialect;
  }
  return /^\/v1\/(rozmowy|rozmowy\/.*)$/.test(pathOnly(path)) ? 'pl' : 'en';
}

function pathOnly(url: string): string {
  const path = url.split('?')[0];
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

import {
  ConversationStatus,
  CONVERSATION_STATUSES,
  Dialect,
  DIALECTS,
  EVENT_NAMES,
  PLANS,
  PLAN_NAMES,
  EventType,
  EVENT_TYPES,
  PublicEventType,
  PUBLIC_EVENT_TYPES,
  STATUS_NAMES,
} from './dialect-tables';

/**
 * API values are matched exactly as docs/dialects.md lists them ("Exact values"): no change of
 * case, spacing or Unicode form. Plans are named by people at the CLI, which also takes any case,
 * spacing and Unicode form of a plan's name.
 */
function loosened(value: string): string {
  return value.normalize('NFC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('en');
}

function reverseIndex<K extends string>(
  keys: readonly K[],
  spellings: (key: K) => readonly string[],
  form: (value: string) => string = (value) => value,
) {
  const index = new Map<string, K>();
  for (const key of keys) for (const spelling of spellings(key)) index.set(form(spelling), key);
  return (value: string) => index.get(form(value));
}

export const parseStatus = reverseIndex(CONVERSATION_STATUSES, (s) => Object.values(STATUS_NAMES[s]));
export const parseEventType = reverseIndex(EVENT_TYPES, (e) => Object.values(EVENT_NAMES[e]));
export const parsePlan = reverseIndex(PLANS, (p) => PLAN_NAMES[p], loosened);

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

/** One of the four original public event types (what a webhook subscription's `*` stands for). */
export const isPublicEventType = (value: string): value is PublicEventType =>
  (PUBLIC_EVENT_TYPES as readonly string[]).includes(value);

export const isDialect = (value: unknown): value is Dialect =>
  typeof value === 'string' && (DIALECTS as readonly string[]).includes(value);

/**
 * Output dialect (docs/dialects.md): an explicit `Accept-Language` of en, ms or pl wins (highest q first);
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

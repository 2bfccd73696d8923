/**
 * The instants the API takes and gives: what Postgres `timestamptz` stores that ISO 8601's
 * four-digit years can write, from the first millisecond of year 1 to the last of year 9999 (UTC).
 * Every date query parameter and body field is held to this one range (the `date-time` format
 * of schema-validation.ts, the analytics range), so no date a client sends can reach Postgres
 * out of its range, and every stored time renders back as the API writes times.
 */
export const STORABLE_INSTANTS = {
  earliest: '0001-01-01T00:00:00.000Z',
  latest: '9999-12-31T23:59:59.999Z',
} as const;
const EARLIEST_MS = Date.parse(STORABLE_INSTANTS.earliest);
const LATEST_MS = Date.parse(STORABLE_INSTANTS.latest);

/** Postgres refuses a UTC offset of 16 hours or more. */
const MAX_OFFSET_MINUTES = 15 * 60 + 59;

/** What the `date-time` format accepts, as an error message says it. */
export const DATE_TIME_MESSAGE = `must be an ISO 8601 date-time with an offset (e.g. 2026-03-01T09:00:00Z) from ${STORABLE_INSTANTS.earliest} to ${STORABLE_INSTANTS.latest}`;

/**
 * ISO 8601 / RFC 3339: a date, optionally a time (seconds and fraction optional), optionally an
 * offset (`Z`, `±hh:mm`, `±hhmm`, `±hh`). A `+` that an unencoded query string turned into a
 * space is read as `+`.
 */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+\- ])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * Milliseconds since the epoch of a UTC calendar time (month 1-12). Unlike `Date.UTC`, years 0 to
 * 99 are those years, not 1900 to 1999.
 */
export function utcMilliseconds(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  millisecond = 0,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}

/**
 * An ISO 8601 text as epoch milliseconds, or undefined when it is not one or names an instant
 * outside STORABLE_INSTANTS. Without an offset (a date alone, or a time without `Z` or `±hh:mm`)
 * the text is a wall-clock time that `local` places (analytics: in the request's time zone);
 * without `local` an offset is required. Digits beyond milliseconds round up: with data timed to
 * the millisecond, a half-open range [from, to) then holds exactly the rows it should.
 */
export function parseInstant(text: string, local?: (wallClockMs: number) => number): number | undefined {
  const match = ISO_8601.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const fraction = (match[7] ?? '').padEnd(9, '0');
  const [offsetHours, offsetMinutes] = [Number(match[10] ?? 0), Number(match[11] ?? 0)];
  const daysInMonth = new Date(utcMilliseconds(year, month + 1, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetMinutes > 59) return undefined;
  if (offsetHours * 60 + offsetMinutes > MAX_OFFSET_MINUTES) return undefined;
  const wallClock =
    utcMilliseconds(year, month, day, hour, minute, second, Number(fraction.slice(0, 3))) +
    (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  let instant: number | undefined;
  if (match[8]) instant = wallClock;
  else if (match[9])
    instant = wallClock - (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  else instant = local?.(wallClock);
  return instant !== undefined && instant >= EARLIEST_MS && instant <= LATEST_MS ? instant : undefined;
}

/** The `date-time` format of every schema: an ISO 8601 date-time with an offset, in the storable range. */
export const isStorableDateTime = (text: string): boolean => parseInstant(text) !== undefined;

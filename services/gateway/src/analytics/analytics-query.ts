import {
  ANALYTICS_DEFAULT_RANGE_DAYS,
  AnalyticsRangeQuery,
  AnalyticsSummaryParams,
  AnalyticsTimeseriesParams,
  AnalyticsTimeseriesQuery,
  DAY_MS,
  rangeErrors,
} from '@app/contracts';
import { DomainError, FieldError } from '@app/errors';
import { isTimeZone, wallClockToInstant } from './zoned-time';

/**
 * ISO 8601 / RFC 3339: a date, or a date and time with an optional offset. A `+` that an
 * unencoded query string turned into a space is read as `+`.
 */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+\- ])(\d{2})(?::?(\d{2}))?)?)?$/;
const INSTANT_MESSAGE =
  'must be an ISO 8601 date or date-time (e.g. 2026-03-01 or 2026-03-01T09:00:00+01:00) from 1970 to 9999';

/**
 * An ISO 8601 text as epoch milliseconds. Without an offset (a date, or a date-time without `Z`
 * or `+hh:mm`) it is local time in `timeZone`. Digits beyond milliseconds round up: with data
 * timed to the millisecond, [from, to) then holds exactly the rows it should.
 */
export function parseInstant(text: string, timeZone: string): number | undefined {
  const match = ISO_8601.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const fraction = (match[7] ?? '').padEnd(9, '0');
  const [offsetHours, offsetMinutes] = [Number(match[10] ?? 0), Number(match[11] ?? 0)];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const wallClock =
    Date.UTC(year, month - 1, day, hour, minute, second) +
    Number(fraction.slice(0, 3)) +
    (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  if (match[8]) return wallClock;
  if (match[9]) return wallClock - (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return wallClockToInstant(wallClock, timeZone);
}

/** The range the parameters name: `from`, `to` (default: the 30 days up to now) in `tz` (default UTC). */
function resolveRange(params: AnalyticsSummaryParams, now: number): AnalyticsRangeQuery {
  const errors: FieldError[] = [];
  let timeZone = params.tz ?? 'UTC';
  if (!isTimeZone(timeZone)) {
    errors.push({ field: 'tz', message: 'must be an IANA time zone name such as Europe/Warsaw or UTC' });
    timeZone = 'UTC';
  }
  const instant = (field: 'from' | 'to') => {
    const text = params[field];
    if (text === undefined) return undefined;
    const value = parseInstant(text, timeZone);
    if (value === undefined) errors.push({ field, message: INSTANT_MESSAGE });
    return value ?? NaN;
  };
  const givenFrom = instant('from');
  const to = instant('to') ?? now;
  const from = givenFrom ?? to - ANALYTICS_DEFAULT_RANGE_DAYS * DAY_MS;
  if (errors.length > 0) throw DomainError.validation(errors);
  const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), timeZone };
  const limits = rangeErrors(range);
  if (limits.length > 0) throw DomainError.validation(limits);
  return range;
}

export function summaryQuery(params: AnalyticsSummaryParams, now = Date.now()): AnalyticsRangeQuery {
  return resolveRange(params, now);
}

/** The range, plus `metric` (required) and `interval` (default day). */
export function timeseriesQuery(
  params: AnalyticsTimeseriesParams,
  now = Date.now(),
): AnalyticsTimeseriesQuery {
  const { metric, interval = 'day', ...range } = params;
  return { ...resolveRange(range, now), metric, interval };
}

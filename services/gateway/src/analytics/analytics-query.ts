import {
  ANALYTICS_DEFAULT_RANGE_DAYS,
  AnalyticsRangeQuery,
  AnalyticsSummaryParams,
  AnalyticsTimeseriesParams,
  AnalyticsTimeseriesQuery,
  DAY_MS,
  parseInstant,
  rangeErrors,
  STORABLE_INSTANTS,
} from '@app/contracts';
import { DomainError, FieldError } from '@app/errors';
import { isTimeZone, wallClockToInstant } from './zoned-time';

const INSTANT_MESSAGE = `must be an ISO 8601 date or date-time (e.g. 2026-03-01 or 2026-03-01T09:00:00+01:00) from ${STORABLE_INSTANTS.earliest} to ${STORABLE_INSTANTS.latest}`;

/** An ISO 8601 text as epoch milliseconds; without an offset it is local time in `timeZone`. */
export const instantIn = (text: string, timeZone: string): number | undefined =>
  parseInstant(text, (wallClock) => wallClockToInstant(wallClock, timeZone));

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
    const value = instantIn(text, timeZone);
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

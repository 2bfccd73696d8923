import {
  AnalyticsSummaryParams,
  AnalyticsSummaryResponse,
  AnalyticsTimeseriesParams,
  AnalyticsTimeseriesView,
} from '@app/contracts';
import type { Endpoint } from '../http/endpoint';

/** Analytics (docs/analytics.md): exact, consistent with every write committed before the read. */
export const AnalyticsEndpoints = {
  summary: {
    operationId: 'getAnalyticsSummary',
    method: 'GET',
    path: '/v1/analytics/summary',
    tag: 'analytics',
    summary: "What happened in the account's conversations in a range",
    description:
      'Current status counts; conversations started and closed, messages by sender and leads captured in [from, to); first-response and resolution times (count, median, p90) of those that ended in the range; the busiest local hour of day. Exact and consistent with every write committed before the read.',
    query: AnalyticsSummaryParams,
    status: 200,
    response: AnalyticsSummaryResponse,
    problems: ['validation_failed'],
  },
  timeseries: {
    operationId: 'getAnalyticsTimeseries',
    method: 'GET',
    path: '/v1/analytics/timeseries',
    tag: 'analytics',
    summary: 'One metric per hour, day or week',
    description:
      'Buckets start at local hours, midnights or Monday midnights in `tz` (23- and 25-hour days at DST changes; a repeated hour is its own bucket). Every bucket overlapping [from, to) is listed, empty ones as 0, and counts only what falls inside [from, to).',
    query: AnalyticsTimeseriesParams,
    status: 200,
    response: AnalyticsTimeseriesView,
    problems: ['validation_failed'],
  },
} satisfies Record<string, Endpoint>;

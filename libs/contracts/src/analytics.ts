import type { ConversationStatus } from '@app/dialects';
import type { MessageSender } from './conversation-views';

/** RPC patterns of the analytics the conversations service answers (reads: no command log, no events). */
export const AnalyticsPatterns = {
  summary: 'analytics.summary',
  timeseries: 'analytics.timeseries',
} as const;

export const ANALYTICS_METRICS = [
  'conversations_started',
  'conversations_closed',
  'messages_received',
  'messages_sent',
  'leads_captured',
] as const;
export type AnalyticsMetric = (typeof ANALYTICS_METRICS)[number];

export const ANALYTICS_INTERVALS = ['hour', 'day', 'week'] as const;
export type AnalyticsInterval = (typeof ANALYTICS_INTERVALS)[number];

export const ANALYTICS_DEFAULT_RANGE_DAYS = 30;
export const ANALYTICS_MAX_RANGE_DAYS = 400;
export const DAY_MS = 86_400_000;

/** A half-open range [from, to) of instants (ISO 8601 UTC with milliseconds) and an IANA time zone. */
export interface AnalyticsRangeQuery {
  from: string;
  to: string;
  timeZone: string;
}

export type AnalyticsSummaryQuery = AnalyticsRangeQuery;

export interface AnalyticsTimeseriesQuery extends AnalyticsRangeQuery {
  metric: AnalyticsMetric;
  interval: AnalyticsInterval;
}

/** Durations in seconds, rounded to the millisecond; median and p90 are null without samples. */
export interface DurationStats {
  count: number;
  median_seconds: number | null;
  p90_seconds: number | null;
}

/** As the conversations service returns it: canonical (en) status values. */
export interface AnalyticsSummaryView {
  from: string;
  to: string;
  time_zone: string;
  conversations: {
    by_status: Array<{ status: ConversationStatus; count: number }>;
    started: number;
    closed: number;
  };
  messages: { total: number; by_sender: Record<MessageSender, number> };
  leads_captured: number;
  first_response_time: DurationStats;
  resolution_time: DurationStats;
  busiest_hour: { hour: number; messages_received: number } | null;
}

export interface AnalyticsTimeseriesView {
  metric: AnalyticsMetric;
  interval: AnalyticsInterval;
  from: string;
  to: string;
  time_zone: string;
  total: number;
  /** Every bucket that overlaps [from, to), oldest first; `start` is local time with its UTC offset. */
  data: Array<{ start: string; count: number }>;
}

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FieldError } from '@app/errors';
import { CanonicalStatus, MESSAGE_SENDERS, RenderedStatus } from './conversation-views';
import { rpcQuery } from './rpc-envelope';
import { Nullable, Strict, StringEnum, Timestamp } from './schema-types';

/** Analytics reads the conversations service answers (no command log, no events). */

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

const TIME_ZONE = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone of local hours and buckets (Postgres spelling).',
  examples: ['Europe/Warsaw'],
});

/** A half-open range [from, to) of instants (ISO 8601 UTC with milliseconds) and an IANA time zone. */
const rangeFields = {
  from: Timestamp({
    description: 'Start of the range (inclusive), UTC.',
    examples: ['2026-10-24T00:00:00.000Z'],
  }),
  to: Timestamp({
    description: 'End of the range (exclusive), UTC.',
    examples: ['2026-11-23T00:00:00.000Z'],
  }),
};

export const AnalyticsSummaryQuery = Strict({ ...rangeFields, timeZone: TIME_ZONE });
export type AnalyticsSummaryQuery = Static<typeof AnalyticsSummaryQuery>;
export type AnalyticsRangeQuery = AnalyticsSummaryQuery;
export const AnalyticsTimeseriesQuery = Strict({
  ...rangeFields,
  timeZone: TIME_ZONE,
  metric: StringEnum(ANALYTICS_METRICS),
  interval: StringEnum(ANALYTICS_INTERVALS),
});
export type AnalyticsTimeseriesQuery = Static<typeof AnalyticsTimeseriesQuery>;

/** The limits on a range that no schema can state: from <= to, at most 400 days apart. */
export function rangeErrors(range: { from: string; to: string }): FieldError[] {
  const span = Date.parse(range.to) - Date.parse(range.from);
  const errors: FieldError[] = [];
  if (span < 0) errors.push({ field: 'from', message: 'must not be after to' });
  if (span > ANALYTICS_MAX_RANGE_DAYS * DAY_MS) {
    errors.push({ field: 'to', message: `must be at most ${ANALYTICS_MAX_RANGE_DAYS} days after from` });
  }
  return errors;
}

/** Durations in seconds, rounded to the millisecond; median and p90 are null without samples. */
const durationStatsFields = {
  count: Type.Integer({ minimum: 0, description: 'Durations that ended in the range.', examples: [288] }),
  median_seconds: Nullable(Type.Number({ examples: [94.5] }), {
    description: 'Median (percentile_cont 0.5), null without samples.',
  }),
  p90_seconds: Nullable(Type.Number({ examples: [1260.2] }), {
    description: '90th percentile (percentile_cont 0.9, linear interpolation).',
  }),
};
export const DurationStats = Strict(durationStatsFields);
export type DurationStats = Static<typeof DurationStats>;

const summaryFields = <S extends TSchema>(status: S) => ({
  ...rangeFields,
  time_zone: TIME_ZONE,
  conversations: Strict({
    by_status: Type.Array(Strict({ status, count: Type.Integer({ minimum: 0, examples: [42] }) }), {
      description:
        'Every conversation of the account by its current status (not limited to the range), always active, closed, pending in this order.',
      examples: [
        [
          { status: 'active', count: 42 },
          { status: 'closed', count: 1280 },
          { status: 'pending', count: 7 },
        ],
      ],
    }),
    started: Type.Integer({
      minimum: 0,
      description: 'Conversations created in the range.',
      examples: [310],
    }),
    closed: Type.Integer({
      minimum: 0,
      description: 'Closes in the range; a conversation closed, reopened and closed again counts twice.',
      examples: [296],
    }),
  }),
  messages: Strict({
    total: Type.Integer({ minimum: 0, description: 'Messages sent in the range.', examples: [3713] }),
    by_sender: Strict(
      Object.fromEntries(
        MESSAGE_SENDERS.map((sender) => [sender, Type.Integer({ minimum: 0, examples: [1422] })]),
      ) as Record<(typeof MESSAGE_SENDERS)[number], ReturnType<typeof Type.Integer>>,
    ),
  }),
  leads_captured: Type.Integer({
    minimum: 0,
    description: 'Leads captured in the range (every capture).',
    examples: [57],
  }),
  first_response_time: Strict(durationStatsFields, {
    description:
      "From a conversation's first visitor message to the first agent or bot message after it; counted when that reply is sent.",
  }),
  resolution_time: Strict(durationStatsFields, {
    description: 'From the start of a conversation to each of its closes; counted when it closes.',
  }),
  busiest_hour: Nullable(
    Strict({
      hour: Type.Integer({
        minimum: 0,
        maximum: 23,
        description: 'Local hour of day in `time_zone`.',
        examples: [14],
      }),
      messages_received: Type.Integer({
        minimum: 0,
        description: 'Visitor messages in that hour of day over the range.',
        examples: [212],
      }),
    }),
    {
      description:
        'The local hour of day with the most visitor messages (the earliest on a tie); null without any.',
    },
  ),
});

export const AnalyticsSummaryView = Strict(summaryFields(CanonicalStatus));
export type AnalyticsSummaryView = Static<typeof AnalyticsSummaryView>;
export const AnalyticsSummaryResponse = Strict(summaryFields(RenderedStatus));

export const AnalyticsTimeseriesView = Strict({
  metric: StringEnum(ANALYTICS_METRICS, { examples: ['messages_received'] }),
  interval: StringEnum(ANALYTICS_INTERVALS, { examples: ['day'] }),
  ...rangeFields,
  time_zone: TIME_ZONE,
  total: Type.Integer({
    minimum: 0,
    description: 'Sum of every bucket: the same figure the summary gives for the range.',
    examples: [27],
  }),
  data: Type.Array(
    Strict({
      start: Type.String({
        description:
          'Bucket start in local time with its UTC offset (`Z` at offset zero); a bucket ends where the next starts.',
        examples: ['2026-03-29T00:00:00.000+01:00'],
      }),
      count: Type.Integer({
        minimum: 0,
        description: 'Events in the bucket and in [from, to).',
        examples: [12],
      }),
    }),
    { description: 'Every bucket overlapping [from, to), oldest first, empty ones as 0.' },
  ),
});
export type AnalyticsTimeseriesView = Static<typeof AnalyticsTimeseriesView>;

export const AnalyticsRpc = {
  summary: rpcQuery('analytics.summary', AnalyticsSummaryQuery, AnalyticsSummaryView),
  timeseries: rpcQuery('analytics.timeseries', AnalyticsTimeseriesQuery, AnalyticsTimeseriesView),
};

// The public API's query parameters; the gateway resolves them to the UTC range above.
const INSTANT = 'ISO 8601 date or date-time; without an offset it is local time in `tz`.';
const rangeParams = {
  from: Type.Optional(
    Type.String({
      maxLength: 64,
      description: `Start of the range, inclusive: ${INSTANT} Default: 30 days before \`to\`.`,
      examples: ['2026-03-01'],
    }),
  ),
  to: Type.Optional(
    Type.String({
      maxLength: 64,
      description: `End of the range, exclusive: ${INSTANT} At most 400 days after \`from\`. Default: now.`,
      examples: ['2026-04-01'],
    }),
  ),
  tz: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'IANA time zone of dates without an offset, local hours and bucket boundaries. Default: UTC.',
      examples: ['Europe/Warsaw'],
    }),
  ),
};
export const AnalyticsSummaryParams = Strict(rangeParams);
export type AnalyticsSummaryParams = Static<typeof AnalyticsSummaryParams>;
export const AnalyticsTimeseriesParams = Strict({
  metric: StringEnum(ANALYTICS_METRICS, {
    description: 'messages_received are visitor messages; messages_sent agent and bot messages.',
  }),
  interval: Type.Optional(StringEnum(ANALYTICS_INTERVALS, { default: 'day' })),
  ...rangeParams,
});
export type AnalyticsTimeseriesParams = Static<typeof AnalyticsTimeseriesParams>;

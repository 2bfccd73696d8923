import { ApiProperty } from '@nestjs/swagger';
import { ANALYTICS_INTERVALS, ANALYTICS_METRICS } from '@app/contracts';
import { ALL_STATUS_SPELLINGS } from '@app/dialects';

const RANGE = {
  from: {
    format: 'date-time',
    description: 'Start of the range (inclusive), UTC.',
    example: '2026-10-24T00:00:00.000Z',
  },
  to: {
    format: 'date-time',
    description: 'End of the range (exclusive), UTC.',
    example: '2026-11-23T00:00:00.000Z',
  },
  timeZone: {
    description: 'IANA time zone of local hours and buckets (Postgres spelling).',
    example: 'Europe/Warsaw',
  },
};

export class StatusCountResponse {
  @ApiProperty({
    enum: ALL_STATUS_SPELLINGS,
    description: 'Rendered in the output dialect.',
    example: 'active',
  })
  status: string;
  @ApiProperty({ example: 42 }) count: number;
}

export class ConversationFiguresResponse {
  @ApiProperty({
    type: [StatusCountResponse],
    description:
      'Every conversation of the account by its current status (not limited to the range), always active, closed, pending in this order.',
    example: [
      { status: 'active', count: 42 },
      { status: 'closed', count: 1280 },
      { status: 'pending', count: 7 },
    ],
  })
  by_status: StatusCountResponse[];
  @ApiProperty({ description: 'Conversations created in the range.', example: 310 }) started: number;
  @ApiProperty({
    description: 'Closes in the range; a conversation closed, reopened and closed again counts twice.',
    example: 296,
  })
  closed: number;
}

export class MessagesBySenderResponse {
  @ApiProperty({ example: 1850 }) visitor: number;
  @ApiProperty({ example: 1422 }) agent: number;
  @ApiProperty({ example: 377 }) bot: number;
  @ApiProperty({ example: 64 }) system: number;
}

export class MessageFiguresResponse {
  @ApiProperty({ description: 'Messages sent in the range.', example: 3713 }) total: number;
  @ApiProperty({ type: MessagesBySenderResponse }) by_sender: MessagesBySenderResponse;
}

export class DurationStatsResponse {
  @ApiProperty({ description: 'Durations that ended in the range.', example: 288 }) count: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Median (percentile_cont 0.5), null without samples.',
    example: 94.5,
  })
  median_seconds: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: '90th percentile (percentile_cont 0.9, linear interpolation).',
    example: 1260.2,
  })
  p90_seconds: number | null;
}

export class BusiestHourResponse {
  @ApiProperty({ minimum: 0, maximum: 23, description: 'Local hour of day in `time_zone`.', example: 14 })
  hour: number;
  @ApiProperty({ description: 'Visitor messages in that hour of day over the range.', example: 212 })
  messages_received: number;
}

export class AnalyticsSummaryResponse {
  @ApiProperty(RANGE.from) from: string;
  @ApiProperty(RANGE.to) to: string;
  @ApiProperty(RANGE.timeZone) time_zone: string;
  @ApiProperty({ type: ConversationFiguresResponse }) conversations: ConversationFiguresResponse;
  @ApiProperty({ type: MessageFiguresResponse }) messages: MessageFiguresResponse;
  @ApiProperty({ description: 'Leads captured in the range (every capture).', example: 57 })
  leads_captured: number;
  @ApiProperty({
    type: DurationStatsResponse,
    description:
      "From a conversation's first visitor message to the first agent or bot message after it; counted when that reply is sent.",
  })
  first_response_time: DurationStatsResponse;
  @ApiProperty({
    type: DurationStatsResponse,
    description: 'From the start of a conversation to each of its closes; counted when it closes.',
    example: { count: 296, median_seconds: 5400, p90_seconds: 86400 },
  })
  resolution_time: DurationStatsResponse;
  @ApiProperty({
    type: BusiestHourResponse,
    nullable: true,
    description:
      'The local hour of day with the most visitor messages (the earliest on a tie); null without any.',
  })
  busiest_hour: BusiestHourResponse | null;
}

export class TimeseriesBucketResponse {
  @ApiProperty({
    description:
      'Bucket start in local time with its UTC offset (`Z` at offset zero); a bucket ends where the next starts.',
    example: '2026-03-29T00:00:00.000+01:00',
  })
  start: string;
  @ApiProperty({ description: 'Events in the bucket and in [from, to).', example: 12 }) count: number;
}

export class AnalyticsTimeseriesResponse {
  @ApiProperty({ enum: ANALYTICS_METRICS, example: 'messages_received' }) metric: string;
  @ApiProperty({ enum: ANALYTICS_INTERVALS, example: 'day' }) interval: string;
  @ApiProperty(RANGE.from) from: string;
  @ApiProperty(RANGE.to) to: string;
  @ApiProperty(RANGE.timeZone) time_zone: string;
  @ApiProperty({
    description: 'Sum of every bucket: the same figure the summary gives for the range.',
    example: 27,
  })
  total: number;
  @ApiProperty({
    type: [TimeseriesBucketResponse],
    description: 'Every bucket overlapping [from, to), oldest first, empty ones as 0.',
    example: [
      { start: '2026-03-28T00:00:00.000+01:00', count: 12 },
      { start: '2026-03-29T00:00:00.000+01:00', count: 0 },
      { start: '2026-03-30T00:00:00.000+02:00', count: 15 },
    ],
  })
  data: TimeseriesBucketResponse[];
}

export const SUMMARY_EXAMPLE = {
  from: '2026-10-24T00:00:00.000Z',
  to: '2026-11-23T00:00:00.000Z',
  time_zone: 'Europe/Warsaw',
  conversations: {
    by_status: [
      { status: 'active', count: 42 },
      { status: 'closed', count: 1280 },
      { status: 'pending', count: 7 },
    ],
    started: 310,
    closed: 296,
  },
  messages: { total: 3713, by_sender: { visitor: 1850, agent: 1422, bot: 377, system: 64 } },
  leads_captured: 57,
  first_response_time: { count: 288, median_seconds: 94.5, p90_seconds: 1260.2 },
  resolution_time: { count: 296, median_seconds: 5400, p90_seconds: 86400 },
  busiest_hour: { hour: 14, messages_received: 212 },
};

export const TIMESERIES_EXAMPLE = {
  metric: 'messages_received',
  interval: 'day',
  from: '2026-03-27T23:00:00.000Z',
  to: '2026-03-30T22:00:00.000Z',
  time_zone: 'Europe/Warsaw',
  total: 27,
  data: [
    { start: '2026-03-28T00:00:00.000+01:00', count: 12 },
    { start: '2026-03-29T00:00:00.000+01:00', count: 0 },
    { start: '2026-03-30T00:00:00.000+02:00', count: 15 },
  ],
};

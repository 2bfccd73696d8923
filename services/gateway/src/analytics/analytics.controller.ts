import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ANALYTICS_INTERVALS, ANALYTICS_METRICS, AnalyticsSummaryView } from '@app/contracts';
import { Dialect, renderStatus } from '@app/dialects';
import { ApiProblems } from '../http/api-problems.decorator';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { AnalyticsClient } from './analytics.client';
import { parseSummaryQuery, parseTimeseriesQuery } from './analytics-query';
import {
  AnalyticsSummaryResponse,
  AnalyticsTimeseriesResponse,
  SUMMARY_EXAMPLE,
  TIMESERIES_EXAMPLE,
} from './dto/analytics-responses.dto';

type RawQuery = Record<string, string | string[]>;

const FROM = {
  name: 'from',
  required: false,
  description:
    'Start of the range, inclusive: ISO 8601 date or date-time. Without an offset it is local time in `tz`. Default: 30 days before `to`.',
  example: '2026-03-01',
};
const TO = {
  name: 'to',
  required: false,
  description: 'End of the range, exclusive, as `from`; at most 400 days after it. Default: now.',
  example: '2026-04-01',
};
const TZ = {
  name: 'tz',
  required: false,
  description: 'IANA time zone of dates without an offset, local hours and bucket boundaries. Default: UTC.',
  example: 'Europe/Warsaw',
};

@ApiTags('analytics')
@ApiBearerAuth()
@Controller('v1/analytics')
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsClient) {}

  @Get('summary')
  @ApiOperation({
    summary: "What happened in the account's conversations in a range",
    description:
      'Current status counts; conversations started and closed, messages by sender and leads captured in [from, to); first-response and resolution times (count, median, p90) of those that ended in the range; the busiest local hour of day. Exact and consistent with every write committed before the read.',
  })
  @ApiQuery(FROM)
  @ApiQuery(TO)
  @ApiQuery(TZ)
  @ApiOkResponse({ type: AnalyticsSummaryResponse, example: SUMMARY_EXAMPLE })
  @ApiProblems('validation_failed')
  async summary(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Query() query: RawQuery) {
    return presentSummary(await this.analytics.summary(call, parseSummaryQuery(query)), dialect);
  }

  @Get('timeseries')
  @ApiOperation({
    summary: 'One metric per hour, day or week',
    description:
      'Buckets start at local hours, midnights or Monday midnights in `tz` (23- and 25-hour days at DST changes; a repeated hour is its own bucket). Every bucket overlapping [from, to) is listed, empty ones as 0, and counts only what falls inside [from, to).',
  })
  @ApiQuery({
    name: 'metric',
    required: true,
    enum: ANALYTICS_METRICS,
    description: 'messages_received are visitor messages; messages_sent agent and bot messages.',
  })
  @ApiQuery({ name: 'interval', required: false, enum: ANALYTICS_INTERVALS, description: 'Default: day.' })
  @ApiQuery(FROM)
  @ApiQuery(TO)
  @ApiQuery(TZ)
  @ApiOkResponse({ type: AnalyticsTimeseriesResponse, example: TIMESERIES_EXAMPLE })
  @ApiProblems('validation_failed')
  timeseries(@Call() call: CallContext, @Query() query: RawQuery) {
    return this.analytics.timeseries(call, parseTimeseriesQuery(query));
  }
}

/** Status values in the caller's dialect; field names stay English. */
function presentSummary(view: AnalyticsSummaryView, dialect: Dialect) {
  const byStatus = view.conversations.by_status.map(({ status, count }) => ({
    status: renderStatus(status, dialect),
    count,
  }));
  return { ...view, conversations: { ...view.conversations, by_status: byStatus } };
}

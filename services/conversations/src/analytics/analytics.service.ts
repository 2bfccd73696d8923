import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  ANALYTICS_INTERVALS,
  ANALYTICS_MAX_RANGE_DAYS,
  ANALYTICS_METRICS,
  AnalyticsRangeQuery,
  AnalyticsSummaryQuery,
  AnalyticsSummaryView,
  AnalyticsTimeseriesQuery,
  AnalyticsTimeseriesView,
  DAY_MS,
  DurationStats,
  RpcRequest,
} from '@app/contracts';
import { CONVERSATION_STATUSES } from '@app/dialects';
import { DomainError } from '@app/errors';
import { parsePayload } from '../conversations/command-schemas';
import { AnalyticsRepository } from './analytics.repository';
import { localIsoString } from './local-iso-string';

/** The gateway resolves every range to UTC instants; checked again here, whoever sent it. */
const range = {
  from: z.string().datetime(),
  to: z.string().datetime(),
  timeZone: z.string().min(1).max(64),
};
/** The gateway's own checks, with the same fields. */
const withinLimits = (query: { from: string; to: string }, context: z.RefinementCtx) => {
  const span = Date.parse(query.to) - Date.parse(query.from);
  if (span < 0) context.addIssue({ code: 'custom', path: ['from'], message: 'must not be after to' });
  if (span > ANALYTICS_MAX_RANGE_DAYS * DAY_MS) {
    context.addIssue({
      code: 'custom',
      path: ['to'],
      message: `must be at most ${ANALYTICS_MAX_RANGE_DAYS} days after from`,
    });
  }
};

const schemas = {
  summary: z.object(range).superRefine(withinLimits),
  timeseries: z
    .object({ ...range, metric: z.enum(ANALYTICS_METRICS), interval: z.enum(ANALYTICS_INTERVALS) })
    .superRefine(withinLimits),
};

const seconds = (ms: number | undefined) => (ms === undefined ? null : Math.round(ms) / 1000);

function durationStats(row: { count: number; p: [number, number] | null }): DurationStats {
  return { count: row.count, median_seconds: seconds(row.p?.[0]), p90_seconds: seconds(row.p?.[1]) };
}

@Injectable()
export class AnalyticsService {
  constructor(private readonly analytics: AnalyticsRepository) {}

  async summary(request: RpcRequest<AnalyticsSummaryQuery>): Promise<AnalyticsSummaryView> {
    const query = await this.resolveTimeZone(parsePayload(schemas.summary, request.data));
    const row = await this.analytics.summary(request.accountId, query);
    const { totals } = row;
    return {
      ...this.echo(query),
      conversations: {
        by_status: CONVERSATION_STATUSES.map((status) => ({
          status,
          count: Number(row.by_status?.[status] ?? 0),
        })),
        started: totals.started,
        closed: totals.closed,
      },
      messages: {
        total: totals.visitor + totals.agent + totals.bot + totals.system,
        by_sender: { visitor: totals.visitor, agent: totals.agent, bot: totals.bot, system: totals.system },
      },
      leads_captured: totals.leads,
      first_response_time: durationStats(row.first_response),
      resolution_time: durationStats(row.resolution),
      busiest_hour: row.busiest_hour,
    };
  }

  async timeseries(request: RpcRequest<AnalyticsTimeseriesQuery>): Promise<AnalyticsTimeseriesView> {
    const query = await this.resolveTimeZone(parsePayload(schemas.timeseries, request.data));
    const rows = await this.analytics.timeseries(request.accountId, query, query.interval, query.metric);
    const data = rows.map((row) => ({
      start: localIsoString(Number(row.start_ms), row.offset_seconds),
      count: Number(row.count),
    }));
    return {
      metric: query.metric,
      interval: query.interval,
      ...this.echo(query),
      total: data.reduce((sum, bucket) => sum + bucket.count, 0),
      data,
    };
  }

  private echo(query: AnalyticsRangeQuery) {
    return {
      from: new Date(query.from).toISOString(),
      to: new Date(query.to).toISOString(),
      time_zone: query.timeZone,
    };
  }

  /** Time zones are Postgres's (it draws the bucket boundaries), named as it spells them. */
  private async resolveTimeZone<T extends AnalyticsRangeQuery>(query: T): Promise<T> {
    const timeZone = await this.analytics.timeZone(query.timeZone);
    if (!timeZone) throw DomainError.validation([{ field: 'tz', message: 'must be an IANA time zone name' }]);
    return { ...query, timeZone };
  }
}

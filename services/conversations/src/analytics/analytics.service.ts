import { Injectable } from '@nestjs/common';
import {
  AnalyticsRangeQuery,
  AnalyticsRpc,
  AnalyticsSummaryView,
  AnalyticsTimeseriesView,
  DurationStats,
  rangeErrors,
  RpcCall,
} from '@app/contracts';
import { CONVERSATION_STATUSES } from '@app/dialects';
import { DomainError } from '@app/errors';
import { AnalyticsRepository } from './analytics.repository';
import { localIsoString } from './local-iso-string';

const seconds = (ms: number | undefined) => (ms === undefined ? null : Math.round(ms) / 1000);

function durationStats(row: { count: number; p: [number, number] | null }): DurationStats {
  return { count: row.count, median_seconds: seconds(row.p?.[0]), p90_seconds: seconds(row.p?.[1]) };
}

@Injectable()
export class AnalyticsService {
  constructor(private readonly analytics: AnalyticsRepository) {}

  async summary(request: RpcCall<typeof AnalyticsRpc.summary>): Promise<AnalyticsSummaryView> {
    const query = await this.resolveTimeZone(request.data);
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

  async timeseries(request: RpcCall<typeof AnalyticsRpc.timeseries>): Promise<AnalyticsTimeseriesView> {
    const query = await this.resolveTimeZone(request.data);
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

  /**
   * The range's limits (the gateway's own, checked again whoever sent it), and the time zone as
   * Postgres spells it (it draws the bucket boundaries).
   */
  private async resolveTimeZone<T extends AnalyticsRangeQuery>(query: T): Promise<T> {
    const errors = rangeErrors(query);
    if (errors.length > 0) throw DomainError.validation(errors);
    const timeZone = await this.analytics.timeZone(query.timeZone);
    if (!timeZone) throw DomainError.validation([{ field: 'tz', message: 'must be an IANA time zone name' }]);
    return { ...query, timeZone };
  }
}

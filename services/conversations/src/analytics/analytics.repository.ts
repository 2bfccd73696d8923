import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AnalyticsInterval, AnalyticsMetric, AnalyticsRangeQuery } from '@app/contracts';
import { execute } from '@app/database';
import { ANALYTICS_SQL, type BucketRow, type SummaryRow } from './analytics.sql';

/** The analytics reads: one statement each, always scoped to the account. */
@Injectable()
export class AnalyticsRepository {
  private timeZones?: Promise<Map<string, string>>;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async summary(accountId: string, range: AnalyticsRangeQuery): Promise<SummaryRow> {
    const {
      rows: [row],
    } = await execute(this.db, ANALYTICS_SQL.summary, [accountId, range.from, range.to, range.timeZone]);
    return row;
  }

  async timeseries(
    accountId: string,
    range: AnalyticsRangeQuery,
    interval: AnalyticsInterval,
    metric: AnalyticsMetric,
  ): Promise<BucketRow[]> {
    const { rows } = await execute(this.db, ANALYTICS_SQL.timeseries, [
      accountId,
      range.from,
      range.to,
      range.timeZone,
      interval,
      metric,
    ]);
    return rows;
  }

  /** Postgres's spelling of an IANA zone name given in any case, or undefined if it has no such zone. */
  async timeZone(name: string): Promise<string | undefined> {
    this.timeZones ??= execute(this.db, ANALYTICS_SQL.timeZones).then(
      ({ rows }) => new Map(rows.map((row) => [row.name.toLowerCase(), row.name])),
      (error: unknown) => {
        this.timeZones = undefined;
        throw error;
      },
    );
    return (await this.timeZones).get(name.toLowerCase());
  }

  /** Folds up to `limit` striped slot rows; returns how many it moved. */
  async compact(limit: number): Promise<number> {
    const {
      rows: [row],
    } = await execute(this.db, ANALYTICS_SQL.compact, [limit]);
    return row.moved;
  }
}

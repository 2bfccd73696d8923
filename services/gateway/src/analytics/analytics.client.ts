import { Injectable } from '@nestjs/common';
import {
  AnalyticsPatterns,
  AnalyticsSummaryQuery,
  AnalyticsSummaryView,
  AnalyticsTimeseriesQuery,
  AnalyticsTimeseriesView,
} from '@app/contracts';
import { RpcClient } from '@app/messaging';
import type { CallContext } from '../http/request-state';

/** The conversations service's analytics, one RabbitMQ request/reply each. */
@Injectable()
export class AnalyticsClient {
  constructor(private readonly rpc: RpcClient) {}

  summary(call: CallContext, query: AnalyticsSummaryQuery) {
    return this.rpc.send<AnalyticsSummaryView>({ pattern: AnalyticsPatterns.summary, data: query, ...call });
  }

  timeseries(call: CallContext, query: AnalyticsTimeseriesQuery) {
    return this.rpc.send<AnalyticsTimeseriesView>({
      pattern: AnalyticsPatterns.timeseries,
      data: query,
      ...call,
    });
  }
}

import { Controller, Query } from '@nestjs/common';
import {
  AnalyticsRpc,
  AnalyticsSummaryParams,
  AnalyticsSummaryView,
  AnalyticsTimeseriesParams,
  type Static,
} from '@app/contracts';
import { Dialect, renderStatus } from '@app/dialects';
import { RpcClient } from '@app/messaging';
import { ApiEndpoint } from '../http/endpoint';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { AnalyticsEndpoints } from './analytics.endpoints';
import { summaryQuery, timeseriesQuery } from './analytics-query';

/** Analytics reads, answered by the conversations service. */
@Controller()
export class AnalyticsController {
  constructor(private readonly rpc: RpcClient) {}

  @ApiEndpoint(AnalyticsEndpoints.summary)
  async summary(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Static<typeof AnalyticsSummaryParams>,
  ) {
    return presentSummary(await this.rpc.call(AnalyticsRpc.summary, call, summaryQuery(query)), dialect);
  }

  @ApiEndpoint(AnalyticsEndpoints.timeseries)
  timeseries(@Call() call: CallContext, @Query() query: Static<typeof AnalyticsTimeseriesParams>) {
    return this.rpc.call(AnalyticsRpc.timeseries, call, timeseriesQuery(query));
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

import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { AnalyticsRpc, RpcCall } from '@app/contracts';
import { HandlesRpc } from '@app/messaging';
import { AnalyticsService } from './analytics.service';

/** RPC entry points of the analytics reads (queries already validated by the RpcServer). */
@Controller()
export class AnalyticsHandler {
  constructor(private readonly service: AnalyticsService) {}

  @HandlesRpc(AnalyticsRpc.summary)
  summary(@Payload() request: RpcCall<typeof AnalyticsRpc.summary>) {
    return this.service.summary(request);
  }

  @HandlesRpc(AnalyticsRpc.timeseries)
  timeseries(@Payload() request: RpcCall<typeof AnalyticsRpc.timeseries>) {
    return this.service.timeseries(request);
  }
}

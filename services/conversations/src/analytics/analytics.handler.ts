import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AnalyticsPatterns, RpcRequest } from '@app/contracts';
import { AnalyticsService } from './analytics.service';

/** RPC entry points of the analytics reads. */
@Controller()
export class AnalyticsHandler {
  constructor(private readonly service: AnalyticsService) {}

  @MessagePattern(AnalyticsPatterns.summary)
  summary(@Payload() request: RpcRequest<never>) {
    return this.service.summary(request);
  }

  @MessagePattern(AnalyticsPatterns.timeseries)
  timeseries(@Payload() request: RpcRequest<never>) {
    return this.service.timeseries(request);
  }
}

import { Module } from '@nestjs/common';
import { RpcModule } from '../core/rpc.module';
import { AnalyticsController } from './analytics.controller';

/** The analytics reads, answered by the conversations service. */
@Module({ imports: [RpcModule], controllers: [AnalyticsController] })
export class AnalyticsModule {}

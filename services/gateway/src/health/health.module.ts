import { Module } from '@nestjs/common';
import { OPS_CONTROLLERS, OPS_TERMINUS } from '@app/observability';
import { RpcModule } from '../core/rpc.module';
import { gatewayReadiness } from './gateway-readiness';

/** /health/live, /health/ready and /metrics on the gateway's own port. */
@Module({ imports: [OPS_TERMINUS, RpcModule], controllers: OPS_CONTROLLERS, providers: [gatewayReadiness] })
export class HealthModule {}

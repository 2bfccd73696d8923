import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import type Redis from 'ioredis';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RpcClient } from '@app/messaging';
import type { GatewayConfig } from '@app/config';
import { GATEWAY_CONFIG } from '../gateway-config.token';
import { REDIS } from '../rate-limit/redis-connection';

/** Liveness (the process answers) and readiness (Postgres and RabbitMQ reachable; Redis too when failing closed). */
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly rpc: RpcClient,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  private get failClosed(): boolean {
    return this.config.RATE_LIMIT_FAIL_MODE === 'closed';
  }

  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready() {
    const postgres = await this.db.query('SELECT 1').then(
      () => 'up',
      () => 'down',
    );
    const rabbitmq = this.rpc.connected ? 'up' : 'down';
    const redis = await this.redis.ping().then(
      () => 'up',
      () => 'down',
    );
    const checks = { postgres, rabbitmq, redis };
    // Failing open, a replica without Redis still serves: taking it out of the load balancer
    // would turn a limiter outage into an API outage.
    const required = this.failClosed ? Object.values(checks) : [postgres, rabbitmq];
    if (required.some((state) => state !== 'up'))
      throw new ServiceUnavailableException({ status: 'unavailable', checks });
    return { status: 'ok', checks };
  }
}

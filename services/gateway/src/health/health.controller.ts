import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import type Redis from 'ioredis';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RpcClient } from '@app/messaging';
import { REDIS } from '../rate-limit/redis-connection';

/** Liveness (the process answers) and readiness (Postgres, RabbitMQ and Redis are reachable). */
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly rpc: RpcClient,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

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
    if (Object.values(checks).some((state) => state !== 'up')) throw new ServiceUnavailableException({ status: 'unavailable', checks });
    return { status: 'ok', checks };
  }
}

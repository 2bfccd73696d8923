import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RpcClient } from '@app/messaging';

/** Liveness (the process answers) and readiness (Postgres and RabbitMQ are reachable). */
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly rpc: RpcClient,
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
    const checks = { postgres, rabbitmq };
    if (postgres !== 'up' || rabbitmq !== 'up') throw new ServiceUnavailableException({ status: 'unavailable', checks });
    return { status: 'ok', checks };
  }
}

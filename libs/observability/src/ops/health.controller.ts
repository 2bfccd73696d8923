import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorFunction } from '@nestjs/terminus';
import { READINESS_CHECKS } from './readiness-checks';

/**
 * Liveness: the process answers. Readiness: every dependency check is up (200 with terminus's
 * body), else 503 with the same body naming what is down. The 503 is written here, not thrown, so
 * that an application's own exception filter (the gateway's problem details) does not rewrite it.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    @Inject(READINESS_CHECKS) private readonly checks: HealthIndicatorFunction[],
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) reply: { status(code: number): unknown }) {
    try {
      return await this.health.check(this.checks);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      reply.status(503);
      return error.getResponse();
    }
  }
}

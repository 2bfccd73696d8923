import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorFunction } from '@nestjs/terminus';
import { VERSION } from '../build-info';
import { READINESS_CHECKS } from './readiness-checks';

/** Seconds a load balancer or client is told to wait before asking an unready replica again. */
const NOT_READY_RETRY_AFTER_SECONDS = 5;

/**
 * Liveness: the process answers (and says which release it runs). Readiness: every dependency check is up (200 with terminus's
 * body), else 503 with the same body naming what is down, and Retry-After. The 503 is written here, not thrown, so
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
    return { status: 'ok', version: VERSION };
  }

  @Get('ready')
  async ready(
    @Res({ passthrough: true })
    reply: {
      status(code: number): unknown;
      header(name: string, value: string): unknown;
    },
  ) {
    try {
      return await this.health.check(this.checks);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      reply.status(503);
      reply.header('retry-after', String(NOT_READY_RETRY_AFTER_SECONDS));
      return error.getResponse();
    }
  }
}

import { Module } from '@nestjs/common';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { GATEWAY_CONFIG, GATEWAY_LOGGER, REDIS } from '../core/tokens';
import { RateLimitMetrics } from './rate-limit-metrics';
import { RateLimits } from './rate-limits';

/** The per-account and per-IP limits in Redis. */
@Module({
  providers: [
    {
      provide: RateLimits,
      inject: [REDIS, GATEWAY_CONFIG, GATEWAY_LOGGER, Registry],
      useFactory: (redis: Redis, config: GatewayConfig, logger: Logger, registry: Registry) =>
        new RateLimits(redis, config, logger, new RateLimitMetrics(registry)),
    },
  ],
  exports: [RateLimits],
})
export class RateLimitModule {}

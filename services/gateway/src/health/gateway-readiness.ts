import type { FactoryProvider } from '@nestjs/common';
import type { HealthIndicatorFunction } from '@nestjs/terminus';
import { getDataSourceToken } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import type { GatewayConfig } from '@app/config';
import { RpcClient } from '@app/messaging';
import { postgresCheck, rabbitmqCheck, READINESS_CHECKS, readinessProbe } from '@app/observability';
import { GATEWAY_CONFIG, REDIS } from '../core/tokens';
import { DrainState } from '../http/connection-drain';

/**
 * The gateway is ready when Postgres and RabbitMQ are reachable, and Redis too when it fails
 * closed, until its graceful stop begins (then `shutdown` is down, so load balancers move on).
 */
export const gatewayReadiness: FactoryProvider<HealthIndicatorFunction[]> = {
  provide: READINESS_CHECKS,
  inject: [getDataSourceToken(), RpcClient, REDIS, GATEWAY_CONFIG, DrainState],
  useFactory: (db: DataSource, rpc: RpcClient, redis: Redis, config: GatewayConfig, drain: DrainState) => [
    readinessProbe('shutdown', () => {
      if (drain.draining) throw new Error('shutting down: finishing requests in flight');
    }),
    postgresCheck(db),
    rabbitmqCheck(() => rpc.connected),
    redisCheck(redis, config.RATE_LIMIT_FAIL_MODE),
  ],
};

/**
 * Failing open, a replica without Redis still serves (unlimited): taking it out of the load
 * balancer would turn a limiter outage into an API outage. Redis is then reported, never required:
 * `status: up` with `reachable: false`.
 */
function redisCheck(redis: Redis, failMode: GatewayConfig['RATE_LIMIT_FAIL_MODE']): HealthIndicatorFunction {
  const probe = readinessProbe('redis', () => redis.ping());
  if (failMode === 'closed') return probe;
  return async () => {
    const { status, ...details } = (await probe()).redis;
    return { redis: { ...details, status: 'up', reachable: status === 'up', required: false } };
  };
}

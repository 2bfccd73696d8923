import Redis, { type RedisOptions } from 'ioredis';
import type { GatewayConfig } from '@app/config';

export type RedisEndpoint = Pick<GatewayConfig, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME'>;

/**
 * A Redis connection to REDIS_URL or, with REDIS_SENTINELS set, to the primary the Sentinels name.
 * After a failover ioredis asks the Sentinels again on reconnect, and `failoverDetector` makes it
 * drop the old primary as soon as they announce the switch instead of when its socket fails.
 */
export function openRedis(endpoint: RedisEndpoint, options: RedisOptions): Redis {
  if (endpoint.REDIS_SENTINELS.length === 0) return new Redis(endpoint.REDIS_URL, options);
  return new Redis(endpoint.REDIS_URL, {
    ...options,
    sentinels: endpoint.REDIS_SENTINELS,
    name: endpoint.REDIS_SENTINEL_NAME,
    failoverDetector: true,
    sentinelRetryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
}

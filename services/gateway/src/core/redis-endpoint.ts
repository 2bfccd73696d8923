import Redis, { type RedisOptions } from 'ioredis';
import type { GatewayConfig } from '@app/config';

export type RedisEndpoint = Pick<GatewayConfig, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME'>;

/**
 * A Redis connection to REDIS_URL or, with REDIS_SENTINELS set, to the primary the Sentinels name.
 * After a failover ioredis asks the Sentinels again on reconnect (Sentinel also closes the
 * clients of a primary it demotes). No `failoverDetector`: its subscription outlives the lost
 * connection, and a switch announced while ioredis is reconnecting aborts that reconnect, which
 * ends the client for good (status `end`, never retried); the HA suite's Redis-primary kill
 * caught a gateway that way, its limiter admitting everything uncounted with the Sentinels and
 * both nodes healthy.
 */
export function openRedis(endpoint: RedisEndpoint, options: RedisOptions): Redis {
  if (endpoint.REDIS_SENTINELS.length === 0) return new Redis(endpoint.REDIS_URL, options);
  return new Redis(endpoint.REDIS_URL, {
    ...options,
    sentinels: endpoint.REDIS_SENTINELS,
    name: endpoint.REDIS_SENTINEL_NAME,
    sentinelRetryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
}

import type Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { openRedis, type RedisEndpoint } from '../core/redis-endpoint';

/**
 * The limiter's Redis connection. No offline queue and no retries per command: while Redis is
 * down a check fails at once (and the fail mode applies) instead of waiting and being replayed
 * later, which would count requests twice. Commands time out after REDIS_TIMEOUT_MS. The
 * limiter sends the checks of one turn of the event loop together (sliding-window-limiter.ts).
 */
export function connectRedis(config: RedisEndpoint & Pick<GatewayConfig, 'REDIS_TIMEOUT_MS'>): Redis {
  return openRedis(config, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: config.REDIS_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
}

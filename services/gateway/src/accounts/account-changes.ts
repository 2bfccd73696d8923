import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { Plan } from '@app/dialects';
import { openRedis, type RedisEndpoint } from '../core/redis-endpoint';

/** A change that must reach every gateway now rather than when its key cache expires. */
export type AccountChange = { accountId: string; plan: Plan } | { keyId: string };

const channelName = (keyPrefix: string) => `${keyPrefix}account-changes`;

/**
 * Where a changed plan is written for the rate limiter's script to read in the same atomic call
 * as the count, so the new quota applies to the very next request on every gateway. It only has
 * to outlive the gateways' key cache (AUTH_CACHE_TTL_MS), after which the plan comes from Postgres.
 */
export const planOverrideKey = (keyPrefix: string, accountId: string) => `${keyPrefix}rl:plan:${accountId}`;
const PLAN_OVERRIDE_TTL_SECONDS = 60;

/**
 * Announces plan changes and key revocations: a plan goes to its override key, and every gateway
 * is told on a channel to drop the cached key records concerned. If Redis is down, caches still
 * expire within AUTH_CACHE_TTL_MS.
 */
export async function announceAccountChange(
  endpoint: RedisEndpoint,
  keyPrefix: string,
  change: AccountChange,
): Promise<void> {
  const redis = openRedis(endpoint, {
    lazyConnect: true,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
  });
  try {
    await redis.connect();
    const announcement = redis.multi();
    if ('plan' in change)
      announcement.set(
        planOverrideKey(keyPrefix, change.accountId),
        change.plan,
        'EX',
        PLAN_OVERRIDE_TTL_SECONDS,
      );
    announcement.publish(channelName(keyPrefix), JSON.stringify(change));
    await announcement.exec();
  } finally {
    redis.disconnect();
  }
}

export function subscribeToAccountChanges(
  subscriber: Redis,
  keyPrefix: string,
  onChange: (change: AccountChange) => void,
  logger: Logger,
): void {
  const channel = channelName(keyPrefix);
  subscriber.on('message', (from: string, payload: string) => {
    if (from !== channel) return;
    try {
      onChange(JSON.parse(payload) as AccountChange);
    } catch {
      logger.warn({ payload: payload.slice(0, 200) }, 'ignoring malformed account change');
    }
  });
  // ioredis re-subscribes by itself after a reconnect.
  subscriber
    .subscribe(channel)
    .catch((error: Error) => logger.warn({ err: error.message }, 'account-change subscription failed'));
}

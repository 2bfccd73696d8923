import Redis from 'ioredis';
import type { Logger } from 'pino';

/** A change that must reach every gateway's key cache now rather than after its TTL. */
export type AccountChange = { accountId: string } | { keyId: string };

const channelName = (keyPrefix: string) => `${keyPrefix}account-changes`;

/**
 * Plan changes and key revocations are announced on a Redis channel; every gateway drops the
 * cached key records concerned, so the change applies on the next request. If the announcement
 * is lost (Redis down), caches still expire within AUTH_CACHE_TTL_MS.
 */
export async function announceAccountChange(redisUrl: string, keyPrefix: string, change: AccountChange): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 1000, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    await redis.publish(channelName(keyPrefix), JSON.stringify(change));
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
  subscriber.subscribe(channel).catch((error: Error) => logger.warn({ err: error.message }, 'account-change subscription failed'));
}

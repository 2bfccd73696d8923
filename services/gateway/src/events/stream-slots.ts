import type Redis from 'ioredis';

/** How long a slot outlives its gateway's last renewal: a gateway that died frees its slots within this. */
export const SLOT_TTL_MS = 30_000;

/**
 * Claims a slot if the account has fewer than ARGV[3] live ones: a sorted set of stream ids
 * scored by when each expires, on Redis's clock (every gateway compares with the same time).
 * KEYS[1] the account's set; ARGV: stream id, ttl ms, limit. 1 if claimed, else 0.
 */
const CLAIM = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Pushes the expiry of the given streams' slots (ARGV[2..]) of one account (KEYS[1]) ARGV[1] ms on. */
const RENEW = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', ms + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0`;

/**
 * STREAMS_PER_ACCOUNT across every gateway replica: each open stream holds a slot in Redis that
 * its gateway renews every SLOT_TTL_MS / 3 and releases when the stream closes; the slots of a
 * gateway that died expire on their own.
 */
export class StreamSlots {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly limit: number,
  ) {}

  async claim(accountId: string, streamId: string): Promise<boolean> {
    const claimed = await this.redis.eval(CLAIM, 1, this.key(accountId), streamId, SLOT_TTL_MS, this.limit);
    return claimed === 1;
  }

  async renew(accountId: string, streamIds: string[]): Promise<void> {
    await this.redis.eval(RENEW, 1, this.key(accountId), SLOT_TTL_MS, ...streamIds);
  }

  async release(accountId: string, streamId: string): Promise<void> {
    await this.redis.zrem(this.key(accountId), streamId);
  }

  private key(accountId: string): string {
    return `${this.keyPrefix}streams:${accountId}`;
  }
}

import { createHash, randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { STREAM_TOKEN_TTL_SECONDS } from '@app/contracts';
import { DomainError } from '@app/errors';
import type { Principal } from './api-key-authenticator';

const TOKEN_PREFIX = 'st_';

const unavailable = () =>
  new DomainError('service_unavailable', 'Stream tokens cannot be issued or checked now; retry shortly.');

/**
 * Stream tokens (docs/events.md, "Streams in a browser"): a random token that stands for the API
 * key that asked for it, on `GET /v1/events/stream?token=` only, for STREAM_TOKEN_TTL_SECONDS. A
 * browser's EventSource cannot send an Authorization header, and a page must never hold a key.
 * Kept in Redis (every gateway reads the same), under the token's SHA-256 so the store holds
 * nothing that opens a stream; reusable until it expires, so EventSource may reconnect with it.
 */
export class StreamTokens {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async issue(principal: Principal): Promise<{ token: string; expires_at: string }> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + STREAM_TOKEN_TTL_SECONDS * 1000);
    await this.redis
      .set(this.key(token), JSON.stringify(principal), 'EX', STREAM_TOKEN_TTL_SECONDS)
      .catch(() => Promise.reject(unavailable()));
    return { token, expires_at: expiresAt.toISOString() };
  }

  /** The key a live token stands for, or undefined (unknown, expired, or not a stream token). */
  async redeem(token: string): Promise<Principal | undefined> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) return undefined;
    const stored = await this.redis.get(this.key(token)).catch(() => Promise.reject(unavailable()));
    return stored === null ? undefined : (JSON.parse(stored) as Principal);
  }

  private key(token: string): string {
    return `${this.keyPrefix}stream-token:${createHash('sha256').update(token).digest('hex')}`;
  }
}

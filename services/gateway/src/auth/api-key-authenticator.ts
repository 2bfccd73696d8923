import type { Plan } from '@app/dialects';
import { orDatabaseUnavailable } from '@app/database';
import { DomainError } from '@app/errors';
import type { AccountChange } from '../accounts/account-changes';
import { AccountsRepository, KeyRecord } from '../accounts/accounts.repository';
import { parseApiKey, secretMatches } from '../accounts/api-key-format';
import type { Scope } from '../accounts/scopes';

export interface Principal {
  accountId: string;
  keyId: string;
  plan: Plan;
  /** What the key may do (docs/api-conventions.md, "Keys and scopes"). */
  scopes: readonly Scope[];
}

interface CachedKey {
  record: KeyRecord | undefined;
  /** From here on a request still uses the entry but reads the key again in the background. */
  refreshAt: number;
  expiresAt: number;
}

const MAX_CACHED_KEYS = 10_000;
/** Share of the TTL after which a used entry is refreshed ahead of its expiry. */
const REFRESH_AHEAD = 0.75;
/**
 * How long past its expiry an entry still answers while Postgres is unreachable (a leader
 * failover): the request then goes on to wait for the database where it is safe to, instead of
 * failing at once. A change announced meanwhile (forget) still drops the entry.
 */
export const AUTH_CACHE_STALE_IF_UNAVAILABLE_MS = 30_000;

/**
 * Resolves `Authorization: Bearer <key>` to an account. Key rows are cached in memory for a few
 * seconds (AUTH_CACHE_TTL_MS): a revocation, scope or plan change is seen by every replica within
 * that time (at once when announced on Redis, account-changes.ts), and a busy key costs no database round trip. Unknown key ids are cached too, so a flood
 * of made-up keys does not reach Postgres more than once per id and TTL.
 *
 * Under load (docs/operations.md, "Overload and time bounds") a key is read by one query at a time, however many requests
 * need it at once, and a key in use is read again in the background before its entry expires,
 * so busy keys never all miss the cache together and queue on the pool. Postgres unreachable
 * is the 503 `database_unavailable`, unless the key was read within
 * AUTH_CACHE_STALE_IF_UNAVAILABLE_MS of its entry's expiry: then that entry answers.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CachedKey>();
  private readonly reads = new Map<string, Promise<KeyRecord | undefined>>();
  /** Bumped by every forget(): a read that started before it must not be cached. */
  private generation = 0;

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly ttlMs: number,
    private readonly metrics?: { keyRead(): void },
  ) {}

  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (!authorization) throw unauthorized('The Authorization header is missing.');
    const [scheme, token, ...rest] = authorization.trim().split(/\s+/);
    if (scheme.toLowerCase() !== 'bearer' || rest.length > 0) {
      throw unauthorized('Use the Bearer scheme: Authorization: Bearer <API key>.');
    }
    const parsed = token ? parseApiKey(token) : undefined;
    if (!parsed) throw unauthorized('The API key is malformed.');
    const record = await this.lookup(parsed.keyId);
    if (!record || !secretMatches(parsed.secret, record.secretHash))
      throw unauthorized('The API key is not valid.');
    if (record.revoked) throw unauthorized('The API key has been revoked.');
    return { accountId: record.accountId, keyId: parsed.keyId, plan: record.plan, scopes: record.scopes };
  }

  /**
   * The principal of a key known by id (a stream token's), as a request with the key itself
   * would get it: 401 once the key is revoked or gone, its account's current plan and its scopes.
   */
  async authenticateKeyId(keyId: string): Promise<Principal> {
    const record = await this.lookup(keyId);
    if (!record || record.revoked) throw unauthorized('The API key this stream token stands for is revoked.');
    return { accountId: record.accountId, keyId, plan: record.plan, scopes: record.scopes };
  }

  /** Drops cached records so the next request reads the key (and its account's plan) afresh. */
  forget(change: AccountChange): void {
    this.generation += 1;
    if ('keyId' in change) {
      this.cache.delete(change.keyId);
      this.reads.delete(change.keyId);
      return;
    }
    for (const [keyId, cached] of this.cache) {
      if (cached.record?.accountId === change.accountId) this.cache.delete(keyId);
    }
    this.reads.clear();
  }

  private lookup(keyId: string): Promise<KeyRecord | undefined> {
    const cached = this.cache.get(keyId);
    if (cached) {
      const now = Date.now();
      if (cached.expiresAt > now) {
        if (cached.refreshAt <= now) this.read(keyId).catch(() => undefined);
        return Promise.resolve(cached.record);
      }
      if (cached.expiresAt + AUTH_CACHE_STALE_IF_UNAVAILABLE_MS > now) {
        return this.read(keyId).catch((error: unknown) => {
          if (
            error instanceof DomainError &&
            error.code === 'database_unavailable' &&
            this.cache.get(keyId) === cached
          )
            return cached.record;
          throw error;
        });
      }
    }
    return this.read(keyId);
  }

  /** Reads the key from Postgres; callers asking for it meanwhile share the one query. */
  private read(keyId: string): Promise<KeyRecord | undefined> {
    let reading = this.reads.get(keyId);
    if (!reading) {
      const generation = this.generation;
      reading = orDatabaseUnavailable(() => this.accounts.findKey(keyId))
        .then((record) => {
          if (generation === this.generation) this.remember(keyId, record);
          return record;
        })
        .finally(() => {
          if (this.reads.get(keyId) === reading) this.reads.delete(keyId);
        });
      this.reads.set(keyId, reading);
      this.metrics?.keyRead();
    }
    return reading;
  }

  private remember(keyId: string, record: KeyRecord | undefined): void {
    if (this.ttlMs <= 0) return;
    this.cache.delete(keyId);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
    const now = Date.now();
    this.cache.set(keyId, {
      record,
      refreshAt: now + this.ttlMs * REFRESH_AHEAD,
      expiresAt: now + this.ttlMs,
    });
  }
}

function unauthorized(detail: string): DomainError {
  return new DomainError('unauthorized', detail);
}

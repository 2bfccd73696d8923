import type { Plan } from '@app/dialects';
import { DomainError } from '@app/errors';
import type { AccountChange } from '../accounts/account-changes';
import { AccountsRepository, KeyRecord } from '../accounts/accounts.repository';
import { parseApiKey, secretMatches } from '../accounts/api-key-format';

export interface Principal {
  accountId: string;
  keyId: string;
  plan: Plan;
}

interface CachedKey {
  record: KeyRecord | undefined;
  expiresAt: number;
}

const MAX_CACHED_KEYS = 10_000;

/**
 * Resolves `Authorization: Bearer <key>` to an account. Key rows are cached in memory for a few
 * seconds (AUTH_CACHE_TTL_MS): a revocation or plan change is seen by every replica within that
 * time, and a busy key costs no database round trip. Unknown key ids are cached too, so a flood
 * of made-up keys does not reach Postgres more than once per id and TTL.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CachedKey>();

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly ttlMs: number,
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
    return { accountId: record.accountId, keyId: parsed.keyId, plan: record.plan };
  }

  /** Drops cached records so the next request reads the key (and its account's plan) afresh. */
  forget(change: AccountChange): void {
    if ('keyId' in change) {
      this.cache.delete(change.keyId);
      return;
    }
    for (const [keyId, cached] of this.cache) {
      if (cached.record?.accountId === change.accountId) this.cache.delete(keyId);
    }
  }

  private async lookup(keyId: string): Promise<KeyRecord | undefined> {
    const now = Date.now();
    const cached = this.cache.get(keyId);
    if (cached && cached.expiresAt > now) return cached.record;
    const record = await this.accounts.findKey(keyId);
    if (this.ttlMs > 0) {
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(keyId, { record, expiresAt: now + this.ttlMs });
    }
    return record;
  }
}

function unauthorized(detail: string): DomainError {
  return new DomainError('unauthorized', detail);
}

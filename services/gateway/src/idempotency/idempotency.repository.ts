import { DataSource } from 'typeorm';
import { execute, prepare } from '@app/database';

/** Statements prepared once per connection (see libs/database). */
const SQL = {
  claim: prepare(
    `INSERT INTO gateway.idempotency_keys AS k (account_id, key, method, path, body_hash)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account_id, key) DO UPDATE
         SET method = EXCLUDED.method, path = EXCLUDED.path, body_hash = EXCLUDED.body_hash,
             status_code = NULL, response_body = NULL, created_at = now(), completed_at = NULL
         WHERE k.created_at < now() - make_interval(hours => $6)
       RETURNING 1`,
  ),
  find: prepare(
    `SELECT method, path, body_hash, status_code, response_body FROM gateway.idempotency_keys
        WHERE account_id = $1 AND key = $2`,
  ),
  complete: prepare(
    `UPDATE gateway.idempotency_keys SET status_code = $3, response_body = $4, completed_at = now()
        WHERE account_id = $1 AND key = $2`,
  ),
  release: prepare(
    `DELETE FROM gateway.idempotency_keys WHERE account_id = $1 AND key = $2 AND completed_at IS NULL`,
  ),
};

export interface StoredIdempotencyKey {
  method: string;
  path: string;
  bodyHash: string;
  statusCode: number | null;
  /** The response body exactly as it was sent, so a replay is byte-identical. */
  responseBody: string | null;
}

/** Idempotency keys per account, in the gateway's schema. */
export class IdempotencyRepository {
  constructor(
    private readonly db: DataSource,
    private readonly ttlHours: number,
  ) {}

  /**
   * Claims the key for a new request. Returns undefined when claimed; otherwise the live record
   * that holds it. An expired record is taken over as if it did not exist.
   */
  async claim(
    accountId: string,
    key: string,
    request: { method: string; path: string; bodyHash: string },
  ): Promise<StoredIdempotencyKey | undefined> {
    const claimed = await execute(this.db, SQL.claim, [
      accountId,
      key,
      request.method,
      request.path,
      request.bodyHash,
      this.ttlHours,
    ]);
    if (claimed.length > 0) return undefined;
    const [row] = await execute(this.db, SQL.find, [accountId, key]);
    // Deleted between the two statements (its request failed and released it): claim again.
    if (!row) return this.claim(accountId, key, request);
    return {
      method: row.method,
      path: row.path,
      bodyHash: row.body_hash,
      statusCode: row.status_code,
      responseBody: row.response_body,
    };
  }

  async complete(accountId: string, key: string, statusCode: number, responseBody: string): Promise<void> {
    await execute(this.db, SQL.complete, [accountId, key, statusCode, responseBody]);
  }

  /** Frees the key after an outcome the client should retry (5xx): nothing is replayed for it. */
  async release(accountId: string, key: string): Promise<void> {
    await execute(this.db, SQL.release, [accountId, key]);
  }

  async deleteExpired(): Promise<number> {
    const [, deleted] = await this.db.query(
      `DELETE FROM gateway.idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`,
      [this.ttlHours],
    );
    return deleted;
  }
}

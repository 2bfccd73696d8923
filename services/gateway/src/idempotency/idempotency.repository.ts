import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { execute, prepare } from '@app/database';

/** Statements prepared once per connection (see libs/database). */
const SQL = {
  /**
   * Takes the key when it is new, past its retention, or held by a claim whose lease ran out for
   * the same method, path and body (its holder died or could not release it). Returns a row iff taken.
   * The lease ends at $8 (ms since the epoch), counted from the request's arrival, not from when
   * the statement reaches Postgres: a claim delayed past its request's answer holds nothing.
   */
  claim: prepare<{ claimed: number }>(
    `INSERT INTO gateway.idempotency_keys AS k
            (account_id, key, method, path, body_hash, claim_token, locked_until)
       VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($8::double precision / 1000))
       ON CONFLICT (account_id, key) DO UPDATE
         SET method = EXCLUDED.method, path = EXCLUDED.path, body_hash = EXCLUDED.body_hash,
             status_code = NULL, response_body = NULL, created_at = now(), completed_at = NULL,
             claim_token = EXCLUDED.claim_token, locked_until = EXCLUDED.locked_until
         WHERE k.created_at < now() - make_interval(hours => $7)
            OR (k.completed_at IS NULL AND k.locked_until < now()
                AND (k.method, k.path, k.body_hash) = (EXCLUDED.method, EXCLUDED.path, EXCLUDED.body_hash))
       RETURNING 1 AS claimed`,
  ),
  find: prepare<{
    method: string;
    path: string;
    body_hash: string;
    status_code: number | null;
    response_body: string | null;
    claim_token: string | null;
  }>(
    `SELECT method, path, body_hash, status_code, response_body, claim_token FROM gateway.idempotency_keys
        WHERE account_id = $1 AND key = $2`,
  ),
  complete: prepare(
    `UPDATE gateway.idempotency_keys SET status_code = $4, response_body = $5, completed_at = now()
        WHERE account_id = $1 AND key = $2 AND claim_token = $3 AND completed_at IS NULL`,
  ),
  release: prepare(
    `DELETE FROM gateway.idempotency_keys
        WHERE account_id = $1 AND key = $2 AND claim_token = $3 AND completed_at IS NULL`,
  ),
  /** The stored responses that show a conversation (every one about it carries its id). */
  eraseConversation: prepare(
    `DELETE FROM gateway.idempotency_keys
        WHERE account_id = $1 AND completed_at IS NOT NULL AND strpos(response_body, $2) > 0`,
  ),
  deleteExpired: prepare(
    `DELETE FROM gateway.idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`,
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

/** A key held by one request: only that request (its token) may complete or release it. */
export interface IdempotencyClaim {
  accountId: string;
  key: string;
  token: string;
}

/** Idempotency keys per account, in the gateway's schema. */
export class IdempotencyRepository {
  constructor(
    private readonly db: DataSource,
    private readonly ttlHours: number,
    /**
     * How long after its request arrived an unfinished claim holds its key: about the RPC timeout,
     * as its gateway may have died.
     */
    private readonly leaseMs: number,
  ) {}

  /**
   * Claims the key for a new request (`arrivedAt`: when it arrived, ms since the epoch): the
   * claim, or the live record that holds the key. Safe to run again after a lost connection: a
   * claim that did commit is found by its token and is ours.
   */
  async claim(
    accountId: string,
    key: string,
    request: { method: string; path: string; bodyHash: string; arrivedAt: number },
    token = randomUUID(),
  ): Promise<{ claim: IdempotencyClaim } | { existing: StoredIdempotencyKey }> {
    const claimed = await execute(this.db, SQL.claim, [
      accountId,
      key,
      request.method,
      request.path,
      request.bodyHash,
      token,
      this.ttlHours,
      request.arrivedAt + this.leaseMs,
    ]);
    if (claimed.rowCount > 0) return { claim: { accountId, key, token } };
    const {
      rows: [row],
    } = await execute(this.db, SQL.find, [accountId, key]);
    // Deleted between the two statements (its request failed and released it): claim again.
    if (!row) return this.claim(accountId, key, request);
    if (row.claim_token === token) return { claim: { accountId, key, token } };
    return {
      existing: {
        method: row.method,
        path: row.path,
        bodyHash: row.body_hash,
        statusCode: row.status_code,
        responseBody: row.response_body,
      },
    };
  }

  /** Stores the response; nothing happens if the claim was lost meanwhile (taken over after its lease). */
  async complete(claim: IdempotencyClaim, statusCode: number, responseBody: string): Promise<void> {
    await execute(this.db, SQL.complete, [claim.accountId, claim.key, claim.token, statusCode, responseBody]);
  }

  /** Frees the key after an outcome the client should retry (5xx): nothing is replayed for it. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await execute(this.db, SQL.release, [claim.accountId, claim.key, claim.token]);
  }

  /**
   * Drops the stored responses that showed a deleted conversation: a retry with one of those keys
   * is then answered by the conversations service, which tells it the conversation is gone.
   */
  async eraseConversation(accountId: string, conversationId: string): Promise<number> {
    const { rowCount } = await execute(this.db, SQL.eraseConversation, [accountId, conversationId]);
    return rowCount;
  }

  async deleteExpired(): Promise<number> {
    const { rowCount } = await execute(this.db, SQL.deleteExpired, [this.ttlHours]);
    return rowCount;
  }
}

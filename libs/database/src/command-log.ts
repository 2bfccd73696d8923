import { DataSource, EntityManager } from 'typeorm';
import type { RpcRequest } from '@app/contracts';
import { DomainError } from '@app/errors';
import { execute, prepare, PreparedStatement } from './prepared-statement';

/** Raised inside the transaction when a concurrent copy of the command committed first. */
class AlreadyApplied extends Error {}

/**
 * Applies each command at most once, enforced by the primary key of the service schema's
 * `processed_commands` table (command_id, account_id, pattern, response jsonb, created_at), which
 * is written in the same transaction as the command's effects. A repeated command (redelivered
 * after its consumer died, or retried under the same Idempotency-Key) gets the first one's reply.
 *
 * The stored reply is read up front only for redeliveries; any other repeat is caught by the key
 * at commit (its effects roll back) or, if the work now fails (say the conversation was closed in
 * between), by a look-up on that error path. The common case costs no extra round trip.
 */
export class CommandLog {
  /** Statements prepared once per connection. */
  private readonly sql: { recordCommand: PreparedStatement; storedReply: PreparedStatement };

  constructor(
    private readonly db: DataSource,
    schema: string,
  ) {
    this.sql = {
      recordCommand: prepare(
        `INSERT INTO ${schema}.processed_commands (command_id, account_id, pattern, response)
              VALUES ($1, $2, $3, $4) ON CONFLICT (command_id) DO NOTHING RETURNING command_id`,
      ),
      storedReply: prepare(
        `SELECT response FROM ${schema}.processed_commands WHERE command_id = $1 AND account_id = $2`,
      ),
    };
  }

  async applyOnce<T>(request: RpcRequest, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.once(request, () =>
      this.db.transaction(async (tx) => {
        const reply = await work(tx);
        const recorded = await execute(tx, this.sql.recordCommand, [
          request.commandId,
          request.accountId,
          request.pattern,
          JSON.stringify(reply),
        ]);
        if (recorded.length === 0) throw new AlreadyApplied();
        return reply;
      }),
    );
  }

  /**
   * For a command done in one SQL statement that itself inserts its `processed_commands` row
   * (plain INSERT: a repeat fails the whole statement on the primary key, changing nothing).
   */
  applyOnceInStatement<T>(request: RpcRequest, statement: () => Promise<T>): Promise<T> {
    return this.once(request, () =>
      statement().catch((error: unknown) => {
        throw isRepeatedCommand(error) ? new AlreadyApplied() : error;
      }),
    );
  }

  private async once<T>(request: RpcRequest, apply: () => Promise<T>): Promise<T> {
    if (request.redelivered) {
      const stored = await this.storedReply<T>(request);
      if (stored.found) return stored.reply;
    }
    try {
      return await apply();
    } catch (error) {
      if (!(error instanceof AlreadyApplied) && !(error instanceof DomainError)) throw error;
      const first = await this.storedReply<T>(request);
      if (first.found) return first.reply;
      if (error instanceof AlreadyApplied)
        throw new Error(`command ${request.commandId} vanished after a conflict`);
      throw error;
    }
  }

  private async storedReply<T>(request: RpcRequest): Promise<{ found: true; reply: T } | { found: false }> {
    const rows = await execute(this.db, this.sql.storedReply, [request.commandId, request.accountId]);
    return rows.length > 0 ? { found: true, reply: rows[0].response as T } : { found: false };
  }
}

function isRepeatedCommand(error: unknown): boolean {
  // From pg directly, or wrapped by TypeORM (QueryFailedError.driverError).
  const failure = error as {
    code?: string;
    constraint?: string;
    driverError?: { code?: string; constraint?: string };
  };
  const cause = failure?.driverError ?? failure;
  return cause?.code === '23505' && cause.constraint === 'processed_commands_pkey';
}

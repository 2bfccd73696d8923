import { DataSource, EntityManager } from 'typeorm';
import { canonicalJsonHash, RpcRequest } from '@app/contracts';
import { DomainError } from '@app/errors';
import { retryWhileDatabaseUnavailable } from './failover-retry';
import { execute, prepare, PreparedStatement } from './prepared-statement';

/** How long a command's record (and its reply) is kept. */
export const COMMAND_RETENTION_DAYS = 7;

/** Raised inside the transaction when a concurrent copy of the command committed first. */
class AlreadyApplied extends Error {}

/** What a command id stands for: which operation, with which payload, for which account. */
export interface CommandRecord {
  id: string;
  accountId: string;
  pattern: string;
  /** SHA-256 of the payload's canonical JSON. */
  payloadHash: string;
}

export function commandRecord(request: RpcRequest): CommandRecord {
  return {
    id: request.commandId,
    accountId: request.accountId,
    pattern: request.pattern,
    payloadHash: canonicalJsonHash(request.data ?? null),
  };
}

interface StoredCommand<T> {
  pattern: string;
  /** Null for commands recorded before payloads were (they are checked by pattern alone). */
  payloadHash: string | null;
  reply: T;
  /** Its reply showed a conversation deleted since (`erase`): there is nothing to repeat. */
  erased: boolean;
}

/**
 * Applies each command at most once, enforced by the primary key of the service schema's
 * `processed_commands` table (command_id, account_id, pattern, payload_hash, response jsonb,
 * created_at), which is written in the same transaction as the command's effects. A repeated
 * command (redelivered after its consumer died, or retried under the same Idempotency-Key) gets
 * the first one's reply; the same command id with another operation or payload (a key reused
 * for another request after a 5xx) is a 422 `idempotency_key_reused`, never the first's reply.
 *
 * The stored reply is read up front only for redeliveries; any other repeat is caught by the key
 * at commit (its effects roll back) or, if the work now fails (say the conversation was closed in
 * between), by a look-up on that error path. The common case costs no extra round trip.
 */
export class CommandLog {
  /** Statements prepared once per connection. */
  private readonly sql: {
    recordCommand: PreparedStatement<{ command_id: string }>;
    storedCommand: PreparedStatement<{
      pattern: string;
      payload_hash: string | null;
      response: unknown;
      erased: boolean;
    }>;
    purge: PreparedStatement;
    erase: PreparedStatement;
  };

  constructor(
    private readonly db: DataSource,
    schema: string,
  ) {
    this.sql = {
      recordCommand: prepare(
        `INSERT INTO ${schema}.processed_commands (command_id, account_id, pattern, payload_hash, response)
              VALUES ($1, $2, $3, $4, $5) ON CONFLICT (command_id) DO NOTHING RETURNING command_id`,
      ),
      storedCommand: prepare(
        `SELECT pattern, payload_hash, response, erased FROM ${schema}.processed_commands
          WHERE command_id = $1 AND account_id = $2`,
      ),
      // The replies that name the conversation (every reply about one carries its id), recorded
      // since it was created ($3): through the BRIN index of creation times, no index that every
      // command would pay for (deletions are rare).
      erase: prepare(
        `UPDATE ${schema}.processed_commands SET response = NULL, erased = true
          WHERE created_at >= $3::timestamptz AND account_id = $1 AND NOT erased
            AND strpos(response::text, $2) > 0`,
      ),
      purge: prepare(
        `DELETE FROM ${schema}.processed_commands WHERE created_at < now() - make_interval(days => $1)`,
      ),
    };
  }

  /**
   * Deletes command records older than `days` (7 by default: far longer than any redelivery or
   * the gateway's 24 h idempotency window); returns how many went.
   */
  async purge(days = COMMAND_RETENTION_DAYS): Promise<number> {
    const { rowCount } = await execute(this.db, this.sql.purge, [days]);
    return rowCount;
  }

  /**
   * Erases, inside the caller's transaction, the stored replies that show `conversation` (being
   * deleted): a repeat of one of those commands is then a 404 rather than
   * the deleted conversation shown again, or the command applied a second time.
   */
  async erase(
    tx: EntityManager,
    accountId: string,
    conversation: { id: string; created_at: string },
  ): Promise<number> {
    const { rowCount } = await execute(tx, this.sql.erase, [
      accountId,
      conversation.id,
      conversation.created_at,
    ]);
    return rowCount;
  }

  async applyOnce<T>(request: RpcRequest, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.once(request, (command) =>
      this.db.transaction(async (tx) => {
        const reply = await work(tx);
        const recorded = await execute(tx, this.sql.recordCommand, [
          command.id,
          command.accountId,
          command.pattern,
          command.payloadHash,
          JSON.stringify(reply),
        ]);
        if (recorded.rowCount === 0) throw new AlreadyApplied();
        return reply;
      }),
    );
  }

  /**
   * For a command done in one SQL statement that itself inserts its `processed_commands` row from
   * `command` (plain INSERT: a repeat fails the whole statement on the primary key, changing nothing).
   */
  applyOnceInStatement<T>(
    request: RpcRequest,
    statement: (command: CommandRecord) => Promise<T>,
  ): Promise<T> {
    return this.once(request, (command) =>
      statement(command).catch((error: unknown) => {
        throw isRepeatedCommand(error) ? new AlreadyApplied() : error;
      }),
    );
  }

  /**
   * A lost connection (a Postgres failover) is retried: the command id makes every attempt after a
   * commit that did happen end in AlreadyApplied, so the first reply is returned, never a second write.
   */
  private async once<T>(request: RpcRequest, apply: (command: CommandRecord) => Promise<T>): Promise<T> {
    const command = commandRecord(request);
    const retry = { answerBy: request.answerBy };
    if (request.redelivered) {
      const stored = await retryWhileDatabaseUnavailable(() => this.storedCommand<T>(command), retry);
      if (stored) return replyFor(stored, command);
    }
    try {
      return await retryWhileDatabaseUnavailable(() => apply(command), retry);
    } catch (error) {
      if (!(error instanceof AlreadyApplied) && !(error instanceof DomainError)) throw error;
      const first = await retryWhileDatabaseUnavailable(() => this.storedCommand<T>(command), retry);
      if (first) return replyFor(first, command);
      if (error instanceof AlreadyApplied) throw new Error(`command ${command.id} vanished after a conflict`);
      throw error;
    }
  }

  private async storedCommand<T>(command: CommandRecord): Promise<StoredCommand<T> | undefined> {
    const {
      rows: [row],
    } = await execute(this.db, this.sql.storedCommand, [command.id, command.accountId]);
    return (
      row && {
        pattern: row.pattern,
        payloadHash: row.payload_hash,
        reply: row.response as T,
        erased: row.erased,
      }
    );
  }
}

/** The first reply, if the command id was recorded for this very operation and payload. */
function replyFor<T>(stored: StoredCommand<T>, command: CommandRecord): T {
  const samePayload = stored.payloadHash === null || stored.payloadHash === command.payloadHash;
  if (stored.pattern !== command.pattern || !samePayload) {
    throw new DomainError(
      'idempotency_key_reused',
      'This Idempotency-Key was used for another operation or body; use a new key for a new request.',
    );
  }
  if (stored.erased) {
    throw new DomainError(
      'not_found',
      'This request was applied, but the conversation it created or changed has been deleted since.',
    );
  }
  return stored.reply;
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

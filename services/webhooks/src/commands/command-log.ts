import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RpcRequest } from '@app/contracts';
import { execute, prepare } from '@app/database';
import { DomainError } from '@app/errors';

const SQL = {
  recordCommand: prepare(
    `INSERT INTO webhooks.processed_commands (command_id, account_id, pattern, response)
           VALUES ($1, $2, $3, $4) ON CONFLICT (command_id) DO NOTHING RETURNING command_id`,
  ),
  storedReply: prepare(`SELECT response FROM webhooks.processed_commands WHERE command_id = $1 AND account_id = $2`),
};

/** Raised inside the transaction when a concurrent copy of the command committed first. */
class AlreadyApplied extends Error {}

/**
 * Applies each command (create, rotate, test, retry) at most once, as the conversations service
 * does: the command id is recorded in the same transaction as the command's effects, and a
 * repeat (redelivered RPC, or a retry under the same Idempotency-Key) gets the first reply.
 */
@Injectable()
export class CommandLog {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async applyOnce<T>(request: RpcRequest, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    if (request.redelivered) {
      const stored = await this.storedReply<T>(request);
      if (stored.found) return stored.reply;
    }
    try {
      return await this.db.transaction(async (tx) => {
        const reply = await work(tx);
        const recorded = await execute(tx, SQL.recordCommand, [
          request.commandId,
          request.accountId,
          request.pattern,
          JSON.stringify(reply),
        ]);
        if (recorded.length === 0) throw new AlreadyApplied();
        return reply;
      });
    } catch (error) {
      if (!(error instanceof AlreadyApplied) && !(error instanceof DomainError)) throw error;
      const first = await this.storedReply<T>(request);
      if (first.found) return first.reply;
      if (error instanceof AlreadyApplied) throw new Error(`command ${request.commandId} vanished after a conflict`);
      throw error;
    }
  }

  private async storedReply<T>(request: RpcRequest): Promise<{ found: true; reply: T } | { found: false }> {
    const rows = await execute(this.db, SQL.storedReply, [request.commandId, request.accountId]);
    return rows.length > 0 ? { found: true, reply: rows[0].response as T } : { found: false };
  }
}

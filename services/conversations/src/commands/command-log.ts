import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RpcRequest } from '@app/contracts';

/** Raised inside the transaction when a concurrent copy of the command committed first. */
class AlreadyApplied extends Error {}

/**
 * Applies each command at most once, enforced by the primary key of `processed_commands`, which
 * is written in the same transaction as the command's effects. A redelivered command (its first
 * consumer died after committing) or a retried one gets the reply stored by the first.
 */
@Injectable()
export class CommandLog {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async applyOnce<T>(request: RpcRequest, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    const stored = await this.storedReply<T>(request);
    if (stored.found) return stored.reply;
    try {
      return await this.db.transaction(async (tx) => {
        const reply = await work(tx);
        const recorded = await tx.query(
          `INSERT INTO conversations.processed_commands (command_id, account_id, pattern, response)
           VALUES ($1, $2, $3, $4) ON CONFLICT (command_id) DO NOTHING RETURNING command_id`,
          [request.commandId, request.accountId, request.pattern, JSON.stringify(reply)],
        );
        if (recorded.length === 0) throw new AlreadyApplied();
        return reply;
      });
    } catch (error) {
      if (!(error instanceof AlreadyApplied)) throw error;
      const winner = await this.storedReply<T>(request);
      if (!winner.found) throw new Error(`command ${request.commandId} vanished after a conflict`);
      return winner.reply;
    }
  }

  private async storedReply<T>(request: RpcRequest): Promise<{ found: true; reply: T } | { found: false }> {
    const rows = await this.db.query(
      `SELECT response FROM conversations.processed_commands WHERE command_id = $1 AND account_id = $2`,
      [request.commandId, request.accountId],
    );
    return rows.length > 0 ? { found: true, reply: rows[0].response as T } : { found: false };
  }
}

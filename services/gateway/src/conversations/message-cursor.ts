import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  type CursorKind,
  invalidCursor,
  type ListMessagesQuery,
  openCursor,
  SnapshotSealer,
} from '@app/contracts';
import { query } from '@app/database';

/**
 * A messages page's `after` cursor (docs/api-conventions.md, "Cursors"): the order it was read in
 * and the position of the last message read, sealed for the account and the conversation, so it is
 * never applied the other way, in another conversation or in another account. The gateway seals it
 * (keys in its schema, the same for every replica) and sends the conversations service a plain
 * position, which services of every release since 1.0.0 read.
 */
const MESSAGES_CURSOR: CursorKind = {
  purpose: 'messages-cursor',
  format: /^(asc|desc)\.(\d{1,10})$/,
  unsealedPrefix: 'm1.',
};

type Order = ListMessagesQuery['order'];

@Injectable()
export class MessageCursors {
  constructor(private readonly sealer: SnapshotSealer) {}

  seal(order: Order, position: number, accountId: string, conversationId: string): string {
    return this.sealer.sealAs(`${order}.${position}`, accountId, MESSAGES_CURSOR.purpose, conversationId);
  }

  /** The position `cursor` continues after; a 400 naming `after` if it is not ours for this page. */
  positionAfter(cursor: string, order: Order, accountId: string, conversationId: string): number {
    const [madeFor, position] = openCursor(this.sealer, MESSAGES_CURSOR, cursor, accountId, conversationId);
    if (madeFor !== order) throw invalidCursor(`was made for order=${madeFor}; pass the same order with it`);
    return Number(position);
  }

  /** The cursors' sealer with the keys of the gateway's schema, read once at start. */
  static async load(db: DataSource): Promise<MessageCursors> {
    const { rows } = await query<{ id: number; key: Buffer }>(db, `SELECT id, key FROM gateway.cursor_keys`);
    return new MessageCursors(new SnapshotSealer(new Map(rows.map((row) => [row.id, row.key]))));
  }
}

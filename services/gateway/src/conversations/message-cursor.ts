import { DomainError } from '@app/errors';

/**
 * The `after` cursor of a messages page: opaque to clients (base64url), it carries the position of
 * the last message read and the order it was read in, so a cursor is never applied the other way.
 * It names nothing outside the conversation it is used with, so it needs no seal.
 */
const FORMAT = /^m1\.(asc|desc)\.(\d{1,10})$/;

export function messageCursor(order: 'asc' | 'desc', position: number): string {
  return Buffer.from(`m1.${order}.${position}`).toString('base64url');
}

/** The position a cursor continues after; a 400 naming `after` if it is not one of ours for `order`. */
export function positionAfter(cursor: string, order: 'asc' | 'desc'): number {
  const match = FORMAT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || Number(match[2]) > 2_147_483_647) {
    throw DomainError.validation([
      { field: 'after', message: 'must be a pagination.next cursor of this endpoint' },
    ]);
  }
  if (match[1] !== order) {
    throw DomainError.validation([
      { field: 'after', message: `was made for order=${match[1]}; pass the same order with it` },
    ]);
  }
  return Number(match[2]);
}

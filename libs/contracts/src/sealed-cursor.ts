import { type SealPurpose, SnapshotSealer } from './list-snapshot';
import { DomainError } from '@app/errors';

/**
 * The API's `after` cursors (docs/api-conventions.md, "Cursors"), sealed for the account, the
 * endpoint (`purpose`) and, for a conversation's messages, the conversation (`scope`): the events
 * cursor by the conversations service, the messages cursor by the gateway. What 1.0.0 handed out
 * was plain base64url of a text starting with `unsealedPrefix`; those get a message of their own
 * (read again from the first page).
 */
export interface CursorKind {
  purpose: SealPurpose;
  /** What the opened text must look like; its groups are what `open` returns. */
  format: RegExp;
  unsealedPrefix: string;
}

export const NOT_OURS = 'must be a pagination.next cursor of this endpoint, for this account';
export const UNSEALED =
  'is a cursor of an earlier version of the API, no longer accepted; read again from the first page';

/** A 400 naming `after`. */
export const invalidCursor = (message: string) => DomainError.validation([{ field: 'after', message }]);

/** The groups of the text sealed in `cursor`; a 400 naming `after` if it is not ours for these. */
export function openCursor(
  sealer: SnapshotSealer,
  kind: CursorKind,
  cursor: string,
  accountId: string,
  scope?: string,
): string[] {
  const match = kind.format.exec(sealer.openAs(cursor, accountId, kind.purpose, scope) ?? '');
  if (match) return match.slice(1);
  if (Buffer.from(cursor, 'base64url').toString('latin1').startsWith(kind.unsealedPrefix)) {
    throw invalidCursor(UNSEALED);
  }
  throw invalidCursor(NOT_OURS);
}

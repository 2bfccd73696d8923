import {
  decodeSnapshotToken,
  ListConversationsParams,
  ListConversationsQuery,
  PAGE_SIZE,
  type Static,
} from '@app/contracts';
import { ConversationStatus, parseStatus } from '@app/dialects';
import { DomainError } from '@app/errors';

/**
 * The list command for validated query parameters (their spellings already resolved, see
 * http/query-parameters.ts): defaults, the canonical status, and the snapshot the token holds.
 */
export function listCommand(query: Static<typeof ListConversationsParams>): ListConversationsQuery {
  const snapshot = query.snapshot === undefined ? undefined : decodeSnapshotToken(query.snapshot);
  if (query.snapshot !== undefined && !snapshot) {
    throw DomainError.validation([
      { field: 'snapshot', message: 'must be a pagination.snapshot token returned by an earlier page' },
    ]);
  }
  const status = query.status === undefined ? undefined : (parseStatus(query.status) as ConversationStatus);
  return {
    limit: query.limit ?? PAGE_SIZE.default,
    offset: query.offset ?? 0,
    ...(status && { status }),
    ...(snapshot && { snapshot }),
  };
}

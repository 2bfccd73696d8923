import {
  isSnapshotToken,
  ListConversationsParams,
  ListConversationsQuery,
  PAGE_SIZE,
  type Static,
} from '@app/contracts';
import { ConversationStatus, parseStatus } from '@app/dialects';
import { DomainError } from '@app/errors';

/**
 * The list command for validated query parameters (their spellings already resolved, see
 * http/query-parameters.ts): defaults, the canonical status, and the snapshot token.
 */
export function listCommand(query: Static<typeof ListConversationsParams>): ListConversationsQuery {
  // Sealed by the conversations service, which opens it (for this account only); its shape is checked here.
  const { snapshot } = query;
  if (snapshot !== undefined && !isSnapshotToken(snapshot)) {
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

import {
  hasSearchWord,
  isSnapshotToken,
  ListConversationsParams,
  ListConversationsQuery,
  type Static,
} from '@app/contracts';
import { parseStatus } from '@app/dialects';
import { DomainError } from '@app/errors';
import { pageOf } from '../http/path-params';

/**
 * The list command for validated query parameters (their spellings already resolved, see
 * http/query-parameters.ts): defaults, the canonical status, and the snapshot token.
 */
export function listCommand(query: Static<typeof ListConversationsParams>): ListConversationsQuery {
  const { limit, offset, status, snapshot, q, ...filters } = query;
  // Sealed by the conversations service, which opens it (for this account only); its shape is checked here.
  if (snapshot !== undefined && !isSnapshotToken(snapshot)) {
    throw DomainError.validation([
      { field: 'snapshot', message: 'must be a pagination.snapshot token returned by an earlier page' },
    ]);
  }
  return {
    ...pageOf({ limit, offset }),
    ...(status !== undefined && { status: parseStatus(status) }),
    ...filters,
    ...(q !== undefined && hasSearchWord(q) && { q }),
    ...(snapshot && { snapshot }),
  };
}

/** What of a list command the `next` link repeats besides paging: its filters and order. */
export function pageFilters(command: ListConversationsQuery): Record<string, string | string[] | undefined> {
  const { limit, offset, snapshot, ...filters } = command;
  return filters;
}

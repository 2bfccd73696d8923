import { ConversationPage, ConversationView, ConversationWithMessagesView } from '@app/contracts';
import { Dialect, renderStatus } from '@app/dialects';

/** Renders service views in the caller's dialect: only status values change, never field names. */
export function presentConversation<T extends ConversationView | ConversationWithMessagesView>(
  view: T,
  dialect: Dialect,
): T {
  return { ...view, status: renderStatus(view.status, dialect) } as T;
}

export function presentPage(
  page: ConversationPage,
  dialect: Dialect,
  collectionPath: string,
  status?: string,
) {
  const { limit, offset, total, snapshot } = page.pagination;
  const nextOffset = offset + limit;
  const next =
    nextOffset < total
      ? `${collectionPath}?${new URLSearchParams({
          limit: String(limit),
          offset: String(nextOffset),
          snapshot,
          ...(status && { status }),
        }).toString()}`
      : null;
  return {
    data: page.data.map((view) => presentConversation(view, dialect)),
    pagination: { limit, offset, total, snapshot, next },
  };
}

import { ConversationPage, ConversationView, ConversationWithMessagesView } from '@app/contracts';
import { Dialect, renderStatus } from '@app/dialects';

/** Renders service views in the caller's dialect: only status values change, never field names. */
export function presentConversation<T extends ConversationView | ConversationWithMessagesView>(
  view: T,
  dialect: Dialect,
): T {
  return { ...view, status: renderStatus(view.status, dialect) };
}

export function presentPage(
  page: ConversationPage,
  dialect: Dialect,
  collectionPath: string,
  /** The page's filters and order (canonical names and values), repeated in the `next` link. */
  filters: Record<string, string | undefined> = {},
) {
  const { limit, offset, total, snapshot } = page.pagination;
  const nextOffset = offset + limit;
  const next =
    nextOffset < total
      ? `${collectionPath}?${new URLSearchParams({
          limit: String(limit),
          offset: String(nextOffset),
          snapshot,
          ...definedOnly(filters),
        }).toString()}`
      : null;
  return {
    data: page.data.map((view) => presentConversation(view, dialect)),
    pagination: { limit, offset, total, snapshot, next },
  };
}

const definedOnly = (values: Record<string, string | undefined>) =>
  Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );

import { ConversationPage, ConversationView, ConversationWithMessagesView } from '@app/contracts';
import { Dialect, renderStatus } from '@app/dialects';

/**
 * Renders service replies in the caller's dialect: only status values change, never field names.
 * The replies come as the JSON the service serialized them to with the contract's schema (the
 * one the response is serialized with too), so in the canonical dialect (en) that JSON already is
 * the body and is sent as it is, unparsed; another dialect parses and renders it.
 */

export function presentConversation<T extends ConversationView | ConversationWithMessagesView>(
  view: T,
  dialect: Dialect,
): T {
  return { ...view, status: renderStatus(view.status, dialect) };
}

/** A conversation reply's JSON (with or without its messages) as the response body in `dialect`. */
export function conversationBody(json: Buffer, dialect: Dialect): Buffer | ConversationView {
  return dialect === 'en' ? json : presentConversation(parseJson<ConversationView>(json), dialect);
}

/** The `next` link of a page and what the list needs to write it. */
interface PageLink {
  /** The path the list was read at (its spelling is kept in the link). */
  collectionPath: string;
  /** The page's filters and order (canonical names and values), repeated in the link; a list is repeated. */
  filters: Record<string, string | string[] | undefined>;
}

/** A list reply's JSON as the response body in `dialect`: the page plus its `next` link. */
export function pageBody(json: Buffer, dialect: Dialect, link: PageLink): Buffer | object {
  if (dialect === 'en') return withNextLink(json, link);
  const page = parseJson<ConversationPage>(json);
  return {
    data: page.data.map((view) => presentConversation(view, dialect)),
    pagination: { ...page.pagination, next: nextLink(page.pagination, link) },
  };
}

/**
 * The page's JSON with `next` added to its pagination, without parsing its rows: `pagination` is
 * the page's last field (ConversationPage's order, kept by its serializer) and holds no object,
 * so its key's last occurrence is the page's own.
 */
function withNextLink(json: Buffer, link: PageLink): Buffer {
  const start = json.lastIndexOf(PAGINATION_KEY) + PAGINATION_KEY.length;
  const pagination = JSON.parse(
    json.toString('utf8', start, json.length - 1),
  ) as ConversationPage['pagination'];
  const completed = JSON.stringify({ ...pagination, next: nextLink(pagination, link) });
  return Buffer.concat([json.subarray(0, start), Buffer.from(completed), CLOSING_BRACE]);
}

const PAGINATION_KEY = '"pagination":';
const CLOSING_BRACE = Buffer.from('}');

function nextLink(
  { limit, offset, total, snapshot }: ConversationPage['pagination'],
  { collectionPath, filters }: PageLink,
): string | null {
  const nextOffset = offset + limit;
  if (nextOffset >= total) return null;
  const query = new URLSearchParams({ limit: String(limit), offset: String(nextOffset), snapshot });
  for (const [name, value] of Object.entries(filters)) {
    for (const item of value === undefined ? [] : [value].flat()) query.append(name, item);
  }
  return `${collectionPath}?${query.toString()}`;
}

const parseJson = <T>(json: Buffer) => JSON.parse(json.toString('utf8')) as T;

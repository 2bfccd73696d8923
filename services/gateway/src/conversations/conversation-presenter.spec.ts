import {
  compileSerializer,
  ConversationListResponse,
  ConversationPage,
  ConversationWithMessagesView,
} from '@app/contracts';
import type { Dialect } from '@app/dialects';
import { conversationBody, pageBody } from './conversation-presenter';

const conversation = (n: number, metadata: Record<string, unknown> = {}) => ({
  id: `0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a${String(n).padStart(2, '0')}`,
  status: 'active' as const,
  visitor: null,
  subject: `Order "${n}"`,
  metadata,
  tags: ['vip', 'łódź'],
  message_count: 0,
  last_message_at: null,
  created_at: '2026-11-24T00:00:00.000Z',
  updated_at: '2026-11-24T00:00:00.000Z',
  closed_at: null,
});

/** A page as the conversations service sends it: serialized with the reply's schema. */
const replyJson = (page: ConversationPage) => Buffer.from(compileSerializer(ConversationPage)(page));
const bodyJson = (body: Buffer | object) =>
  JSON.parse(Buffer.isBuffer(body) ? body.toString() : JSON.stringify(body)) as unknown;

describe('conversation presenter', () => {
  // Metadata is the client's own: a key named like the page's last field must not be taken for it.
  const page: ConversationPage = {
    data: [
      conversation(1, { pagination: { total: 99, limit: 1 } }),
      conversation(2, { note: '"pagination":{"total":7}' }),
    ],
    pagination: { limit: 2, offset: 0, total: 5, snapshot: 'NzY4Ojc3MDo3Njk' },
  };
  const link = {
    collectionPath: '/v1/rozmowy',
    filters: { status: 'active', order: undefined, tag: ['vip', 'łódź'], q: 'żółw 1001' },
  };

  it('adds the next link to a page without parsing its rows, as rendering it would', () => {
    const sent = pageBody(replyJson(page), 'en', link) as Buffer;
    expect(Buffer.isBuffer(sent)).toBe(true);
    const expected = {
      data: page.data,
      pagination: {
        ...page.pagination,
        next: '/v1/rozmowy?limit=2&offset=2&snapshot=NzY4Ojc3MDo3Njk&status=active&tag=vip&tag=%C5%82%C3%B3d%C5%BA&q=%C5%BC%C3%B3%C5%82w+1001',
      },
    };
    expect(bodyJson(sent)).toEqual(expected);
    // ... byte for byte what serializing the rendered page with the response schema writes.
    // (The reply schema has `tags` optional, the response schema requires it: every row here has it.)
    expect(sent.toString()).toBe(compileSerializer(ConversationListResponse)(expected as never));
  });

  it('writes a null next link on the last page', () => {
    const last = { ...page, pagination: { ...page.pagination, offset: 4 } };
    expect(bodyJson(pageBody(replyJson(last), 'en', link))).toMatchObject({
      pagination: { offset: 4, next: null },
    });
  });

  it.each<[Dialect, string]>([
    ['en', 'active'],
    ['ms', 'aktif'],
    ['pl', 'aktywne'],
  ])('renders statuses in %s', (dialect, status) => {
    const paged = bodyJson(pageBody(replyJson(page), dialect, link)) as ConversationPage;
    expect(paged.data.map((row) => row.status)).toEqual([status, status]);
    const one = { ...conversation(3), messages: [] };
    const json = Buffer.from(compileSerializer(ConversationWithMessagesView)(one));
    expect(bodyJson(conversationBody(json, dialect))).toEqual({ ...one, status });
  });

  it('sends a conversation in the canonical dialect as the service’s bytes', () => {
    const json = Buffer.from(
      compileSerializer(ConversationWithMessagesView)({ ...conversation(4), messages: [] }),
    );
    expect(conversationBody(json, 'en')).toBe(json);
  });
});

import { Type } from '@sinclair/typebox';
import { ConversationListResponse } from './conversation-views';
import { compileSerializer, serializationSchema } from './json-serializer';
import { compileSchema } from './schema-validation';

const conversation = (overrides: Record<string, unknown>) => ({
  id: '0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b',
  status: 'active',
  visitor: null,
  subject: null,
  metadata: { order: '1001', nested: { deep: [1, 'two', null] } },
  tags: ['vip', 'zwrot "pilny"'],
  message_count: 0,
  last_message_at: null,
  created_at: '2026-11-24T00:00:00.000Z',
  updated_at: '2026-11-24T00:00:00.000Z',
  closed_at: null,
  ...overrides,
});

describe('response serialization', () => {
  it('writes a nullable union (either order) as its schema plus nullable, and leaves other unions alone', () => {
    const schema = Type.Object({
      a: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      b: Type.Union([Type.Null(), Type.Integer()]),
      c: Type.Union([Type.String(), Type.Integer()]),
    });
    expect(JSON.parse(JSON.stringify(serializationSchema(schema)))).toEqual({
      type: 'object',
      required: ['a', 'b', 'c'],
      properties: {
        a: { type: 'string', format: 'date-time', nullable: true },
        b: { type: 'integer', nullable: true },
        c: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      },
    });
  });

  it('serializes a page of conversations exactly as JSON.stringify does, nulls and values alike, valid against the contract', () => {
    const page = {
      data: [
        conversation({}),
        conversation({
          status: 'zamknięte',
          visitor: { name: 'Ada "Countess" Lovelace', email: null, phone: '+44 20' },
          subject: 'Order\n1001 \u2028 ✓',
          message_count: 3,
          last_message_at: '2026-11-24T00:01:00.000Z',
          closed_at: '2026-11-24T00:02:00.000Z',
        }),
      ],
      pagination: { limit: 20, offset: 0, total: 2, snapshot: 'NzY4', next: null },
    };
    const serialize = compileSerializer(ConversationListResponse);
    const body = serialize(page);
    expect(JSON.parse(body)).toEqual(page);
    expect(compileSchema(ConversationListResponse)(JSON.parse(body))).toBe(true);
  });
});

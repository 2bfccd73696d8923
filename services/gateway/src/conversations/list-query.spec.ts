import { randomBytes } from 'node:crypto';
import { ListConversationsParams, PAGE_SIZE, parseWith } from '@app/contracts';
import { LIST_QUERY_ALIASES } from '@app/dialects';
import { DomainError } from '@app/errors';
import { resolveQueryParameters } from '../http/query-parameters';
import { listCommand } from './list-query';

type Raw = Record<string, string | string[]>;

/** What the list route does with a query string: spellings resolved, schema checked, command made. */
const parseListQuery = (raw: Raw) =>
  listCommand(
    parseWith(
      ListConversationsParams,
      resolveQueryParameters(raw, ListConversationsParams, LIST_QUERY_ALIASES),
      'query',
    ),
  );

function rejected(raw: Raw): DomainError {
  try {
    parseListQuery(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const domain = error as DomainError;
    expect(domain.code).toBe('validation_failed');
    expect(domain.status).toBe(400);
    return domain;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
}

const fields = (error: DomainError) => (error.errors ?? []).map((e) => e.field).sort();

describe('the list query (spellings, schema, command)', () => {
  it('defaults to limit 20, offset 0 and no status filter', () => {
    expect(PAGE_SIZE).toEqual({ default: 20, max: 100 });
    expect(parseListQuery({})).toEqual({ limit: 20, offset: 0 });
  });

  it('reads the English names', () => {
    expect(parseListQuery({ limit: '5', offset: '10', status: 'pending' })).toEqual({
      limit: 5,
      offset: 10,
      status: 'pending',
    });
  });

  it.each([
    [{ had: '7' }, { limit: 7, offset: 0 }],
    [{ mengimbangi: '3' }, { limit: 20, offset: 3 }],
    [{ przesunięcie: '4' }, { limit: 20, offset: 4 }],
    [{ stan: 'w toku' }, { limit: 20, offset: 0, status: 'pending' }],
    [
      { had: '2', przesunięcie: '6', stan: 'zamknięte' },
      { limit: 2, offset: 6, status: 'closed' },
    ],
  ] as Array<[Raw, object]>)("reads the other dialects' names: %j", (raw, expected) => {
    expect(parseListQuery(raw)).toEqual(expected);
  });

  it.each([
    ['active', 'active'],
    ['aktif', 'active'],
    ['aktywne', 'active'],
    ['closed', 'closed'],
    ['ditutup', 'closed'],
    ['zamknięte', 'closed'],
    ['pending', 'pending'],
    ['belum selesai', 'pending'],
    ['w toku', 'pending'],
  ])('status=%j filters on %s', (text, status) => {
    expect(parseListQuery({ status: text }).status).toBe(status);
  });

  // Exact values only (docs/dialects.md): no other case, spacing or Unicode form.
  it.each([['open'], [''], ['activ'], ['closed,active'], ['ACTIVE'], ['Belum  Selesai'], [' active']])(
    'rejects status=%j naming the status field',
    (text) => {
      const error = rejected({ status: text });
      expect(fields(error)).toEqual(['status']);
      expect(error.errors![0].message).toContain('aktywne');
    },
  );

  it.each([
    ['0'],
    ['101'],
    ['-1'],
    ['1.5'],
    ['abc'],
    [''],
    ['1e2'],
    ['0x10'],
    ['99999999999999999999'],
    [' 50 '],
    ['050'],
    ['+5'],
  ])('rejects limit=%j', (text) => {
    expect(fields(rejected({ limit: text }))).toEqual(['limit']);
  });

  it.each([['1'], ['100'], ['50']])('accepts limit=%j', (text) => {
    expect(parseListQuery({ limit: text }).limit).toBe(Number(text));
  });

  it.each([['-1'], ['abc'], ['2.5'], ['']])('rejects offset=%j', (text) => {
    expect(fields(rejected({ offset: text }))).toEqual(['offset']);
  });

  it('accepts a large offset', () => {
    expect(parseListQuery({ offset: '1000000' }).offset).toBe(1_000_000);
  });

  it('rejects had=101 and mengimbangi=-1 under the canonical field names', () => {
    expect(fields(rejected({ had: '101', mengimbangi: '-1' }))).toEqual(['limit', 'offset']);
  });

  describe('two spellings of one parameter', () => {
    it('is a 400 when the values differ (limit=5&had=10)', () => {
      const error = rejected({ limit: '5', had: '10' });
      expect(fields(error)).toEqual(['limit']);
      expect(error.errors![0].message).toContain('limit=5');
      expect(error.errors![0].message).toContain('had=10');
    });

    it.each([
      [{ offset: '1', mengimbangi: '2' }, 'offset'],
      [{ offset: '1', przesunięcie: '2' }, 'offset'],
      [{ mengimbangi: '1', przesunięcie: '2' }, 'offset'],
      [{ status: 'active', stan: 'closed' }, 'status'],
      [{ status: 'aktif', stan: 'zamknięte' }, 'status'],
    ] as Array<[Raw, string]>)('is a 400 for %j', (raw, field) => {
      expect(fields(rejected(raw))).toEqual([field]);
    });

    it.each([
      [{ status: 'active', stan: 'aktywne' }, { status: 'active' }],
      [{ status: 'belum selesai', stan: 'w toku' }, { status: 'pending' }],
      [{ status: 'ditutup', stan: 'closed' }, { status: 'closed' }],
      [{ limit: '5', had: '5' }, { limit: 5 }],
      [{ offset: '3', mengimbangi: '3', przesunięcie: '3' }, { offset: 3 }],
    ] as Array<[Raw, object]>)('is fine when they mean the same value: %j', (raw, expected) => {
      expect(parseListQuery(raw)).toMatchObject(expected);
    });

    it('names the field of a spelling that is not a whole number in digits (limit=5&had=05)', () => {
      expect(fields(rejected({ limit: '5', had: '05' }))).toEqual(['limit']);
    });
  });

  describe('a repeated parameter', () => {
    it('is fine with the same value twice', () => {
      expect(parseListQuery({ limit: ['5', '5'] })).toMatchObject({ limit: 5 });
    });

    it('is a 400 with different values', () => {
      expect(fields(rejected({ limit: ['5', '6'] }))).toEqual(['limit']);
      expect(fields(rejected({ stan: ['aktywne', 'zamknięte'] }))).toEqual(['status']);
    });
  });

  it('reports every bad parameter at once', () => {
    const error = rejected({ limit: '0', offset: '-5', status: 'nope', foo: 'bar' });
    expect(fields(error)).toEqual(['foo', 'limit', 'offset', 'status']);
  });

  it('refuses unknown parameters by name', () => {
    const error = rejected({ foo: 'bar', page: '2', limit: '3' });
    expect(error.errors).toEqual([
      { field: 'foo', message: 'is not a parameter of this endpoint' },
      { field: 'page', message: 'is not a parameter of this endpoint' },
    ]);
  });

  describe('snapshot (a token sealed by the conversations service, which opens it)', () => {
    const sealed = randomBytes(45).toString('base64url');

    it('passes a well-formed token through unchanged', () => {
      expect(parseListQuery({ snapshot: sealed })).toEqual({ limit: 20, offset: 0, snapshot: sealed });
    });

    it('passes the token on with other parameters in any dialect', () => {
      expect(parseListQuery({ had: '5', mengimbangi: '5', stan: 'aktywne', snapshot: sealed })).toEqual({
        limit: 5,
        offset: 5,
        status: 'active',
        snapshot: sealed,
      });
    });

    it.each([
      ['an ISO timestamp', '2024-05-01T12:00:00Z'],
      ['a raw pg_snapshot', '100:105:'],
      [
        'a base64url pg_snapshot (the former tokens, too short to be sealed)',
        Buffer.from('100:105:').toString('base64url'),
      ],
      ['empty', ''],
      ['standard base64 padding', `${sealed}=`],
      ['SQL in the token', `${sealed}'; DROP TABLE x; --`],
      ['a token over 4096 characters', 'A'.repeat(4097)],
    ])('rejects %s', (_name, text) => {
      expect(fields(rejected({ snapshot: text }))).toEqual(['snapshot']);
    });

    it('rejects a snapshot given twice with different values', () => {
      expect(fields(rejected({ snapshot: [sealed, randomBytes(45).toString('base64url')] }))).toEqual([
        'snapshot',
      ]);
    });
  });
});

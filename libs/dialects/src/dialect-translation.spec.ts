import {
  ALL_STATUS_SPELLINGS,
  CONVERSATION_STATUSES,
  DIALECTS,
  isDialect,
  negotiateDialect,
  parseEventType,
  parsePlan,
  parseStatus,
  PLANS,
  EVENT_TYPES,
  PUBLIC_EVENT_TYPES,
  renderEventType,
  renderStatus,
} from './index';

/** The table of docs/dialects.md, written out independently of dialect-tables.ts. */
const STATUS_TABLE = [
  ['active', 'active', 'aktif', 'aktywne'],
  ['closed', 'closed', 'ditutup', 'zamknięte'],
  ['pending', 'pending', 'belum selesai', 'w toku'],
] as const;

const EVENT_TABLE = [
  ['conversation.started', 'conversation.started', 'perbualan.dimulakan', 'rozmowa.rozpoczęta'],
  ['message.received', 'message.received', 'mesej.diterima', 'wiadomość.odebrana'],
  ['conversation.closed', 'conversation.closed', 'perbualan.tertutup', 'rozmowa.zamknięta'],
  ['lead.captured', 'lead.captured', 'memimpin.ditawan', 'lead.captured'],
  ['conversation.reopened', 'conversation.reopened', 'perbualan.dibuka_semula', 'rozmowa.wznowiona'],
  [
    'conversation.status_changed',
    'conversation.status_changed',
    'perbualan.status_berubah',
    'rozmowa.stan_zmieniony',
  ],
  ['message.sent', 'message.sent', 'mesej.dihantar', 'wiadomość.wysłana'],
  ['conversation.updated', 'conversation.updated', 'perbualan.dikemas_kini', 'rozmowa.zaktualizowana'],
  ['conversation.deleted', 'conversation.deleted', 'perbualan.dipadam', 'rozmowa.usunięta'],
] as const;

const PLAN_TABLE = [
  ['trial', 'trial'],
  ['trial', 'Percubaan'],
  ['trial', 'Wersja próbna'],
  ['pro', 'pro'],
  ['business', 'business'],
] as const;

/** Spellings a loose matcher would take for `spelling`: other case, spacing, Unicode forms. */
function spellingVariants(spelling: string): string[] {
  const variants = [
    spelling.toUpperCase(),
    spelling[0].toUpperCase() + spelling.slice(1),
    ` ${spelling}`,
    `${spelling}\t`,
    spelling.replace(/ /g, '  '),
    spelling.replace(/ /g, '\u00a0'),
    spelling.normalize('NFD'),
  ];
  return variants.filter((variant) => variant !== spelling);
}

describe('statuses', () => {
  it('covers exactly the three statuses of the design', () => {
    expect([...CONVERSATION_STATUSES].sort()).toEqual(['active', 'closed', 'pending']);
  });

  describe.each(STATUS_TABLE)('%s', (status, en, ms, pl) => {
    it('renders in every dialect', () => {
      expect(renderStatus(status, 'en')).toBe(en);
      expect(renderStatus(status, 'ms')).toBe(ms);
      expect(renderStatus(status, 'pl')).toBe(pl);
    });

    it.each([en, ms, pl])('parses %j', (spelling) => {
      expect(parseStatus(spelling)).toBe(status);
    });

    it.each([en, ms, pl])('takes %j only as written: no other case, spacing or Unicode form', (spelling) => {
      for (const variant of spellingVariants(spelling)) expect(parseStatus(variant)).toBeUndefined();
    });

    it('round-trips render -> parse in every dialect', () => {
      for (const dialect of DIALECTS) expect(parseStatus(renderStatus(status, dialect))).toBe(status);
    });
  });

  it.each([
    '',
    ' ',
    'open',
    'activ',
    'belumselesai',
    'wtoku',
    'zamkniete',
    'active pending',
    'conversation.closed',
  ])('rejects %j', (value) => {
    expect(parseStatus(value)).toBeUndefined();
  });

  it('lists every accepted spelling once, for error messages and OpenAPI enums', () => {
    expect([...ALL_STATUS_SPELLINGS].sort()).toEqual(
      STATUS_TABLE.flatMap(([, ...spellings]) => spellings)
        .filter((v, i, all) => all.indexOf(v) === i)
        .sort(),
    );
    expect(ALL_STATUS_SPELLINGS).toHaveLength(9);
  });
});

describe('event types', () => {
  it('covers every event type, the four original public ones first', () => {
    expect([...EVENT_TYPES].sort()).toEqual(EVENT_TABLE.map(([type]) => type).sort());
    expect(EVENT_TYPES.slice(0, 4)).toEqual([...PUBLIC_EVENT_TYPES]);
  });

  it('gives every spelling to one event type only', () => {
    const spellings = EVENT_TABLE.flatMap(([, ...names]) => names.map((name) => name.toLowerCase()));
    expect(new Set(spellings).size).toBe(EVENT_TABLE.length * 3 - 1); // lead.captured is en and pl
  });

  describe.each(EVENT_TABLE)('%s', (type, en, ms, pl) => {
    it('renders in every dialect', () => {
      expect(renderEventType(type, 'en')).toBe(en);
      expect(renderEventType(type, 'ms')).toBe(ms);
      expect(renderEventType(type, 'pl')).toBe(pl);
    });

    it.each([en, ms, pl])('parses %j and no other case, spacing or Unicode form of it', (spelling) => {
      expect(parseEventType(spelling)).toBe(type);
      for (const variant of spellingVariants(spelling)) expect(parseEventType(variant)).toBeUndefined();
    });
  });

  it.each(['', '*', 'conversation', 'conversation.removed', 'webhook.test', 'perbualan'])(
    'does not take %j for an event type',
    (value) => {
      expect(parseEventType(value)).toBeUndefined();
    },
  );
});

describe('plans', () => {
  it('covers exactly trial, pro and business', () => {
    expect([...PLANS].sort()).toEqual(['business', 'pro', 'trial']);
  });

  it.each(PLAN_TABLE)('parses %s from %j in any case and spacing', (plan, spelling) => {
    expect(parsePlan(spelling)).toBe(plan);
    expect(parsePlan(spelling.toLowerCase())).toBe(plan);
    expect(parsePlan(spelling.toUpperCase())).toBe(plan);
    expect(parsePlan(` ${spelling.replace(/ /g, '  ')} `)).toBe(plan);
  });

  it('parses "Wersja próbna" in NFD', () => {
    expect(parsePlan('Wersja próbna'.normalize('NFD'))).toBe('trial');
  });

  it.each(['', 'free', 'enterprise', 'Wersja', 'probna', 'Wersja proba', 'trial pro'])(
    'rejects %j',
    (value) => {
      expect(parsePlan(value)).toBeUndefined();
    },
  );
});

describe('isDialect', () => {
  it.each(['en', 'ms', 'pl'])('accepts %j', (value) => expect(isDialect(value)).toBe(true));
  it.each(['EN', 'fr', '', 'en-GB', undefined, null, 1])('rejects %j', (value) =>
    expect(isDialect(value)).toBe(false),
  );
});

describe('negotiateDialect', () => {
  it.each([
    // Accept-Language wins over the path, whatever the path
    ['en', '/v1/rozmowy', 'en'],
    ['ms', '/v1/conversations', 'ms'],
    ['pl', '/v1/conversations', 'pl'],
    ['ms', '/v1/rozmowy/123', 'ms'],
    // region subtags and case
    ['pl-PL', '/v1/conversations', 'pl'],
    ['MS-my', '/v1/conversations', 'ms'],
    ['en-GB', '/v1/rozmowy', 'en'],
    // highest q first; equal q keeps the header order
    ['en;q=0.1, pl;q=0.9', '/v1/conversations', 'pl'],
    ['ms;q=0.5, pl', '/v1/conversations', 'pl'],
    ['ms, pl', '/v1/conversations', 'ms'],
    ['pl , ms', '/v1/conversations', 'pl'],
    ['ms ; q=0.4 , en ; q=0.6', '/v1/rozmowy', 'en'],
    // languages we do not speak are skipped; q=0 means "not this one"
    ['fr, de;q=0.9, ms;q=0.1', '/v1/conversations', 'ms'],
    ['fr', '/v1/conversations', 'en'],
    ['fr', '/v1/rozmowy', 'pl'],
    ['*', '/v1/rozmowy', 'pl'],
    ['pl;q=0', '/v1/conversations', 'en'],
    ['ms;q=0, en;q=0', '/v1/rozmowy', 'pl'],
    ['', '/v1/rozmowy', 'pl'],
    // no header: the path decides
    [undefined, '/v1/rozmowy', 'pl'],
    [undefined, '/v1/rozmowy/', 'pl'],
    [undefined, '/v1/rozmowy/8d7e0f4a-5f55-4a8e-9a55-0b5d7d1b3b1a', 'pl'],
    [undefined, '/v1/rozmowy/8d7e0f4a-5f55-4a8e-9a55-0b5d7d1b3b1a/wiadomo%C5%9Bci', 'pl'],
    [undefined, '/v1/rozmowy/8d7e0f4a-5f55-4a8e-9a55-0b5d7d1b3b1a/wiadomości', 'pl'],
    [undefined, '/v1/rozmowy?stan=aktywne&limit=5', 'pl'],
    [undefined, '/v1/rozmowy/%E0%A4%A', 'pl'], // undecodable escape: still under /rozmowy
    [undefined, '/v1/conversations', 'en'],
    [undefined, '/v1/conversations/8d7e0f4a-5f55-4a8e-9a55-0b5d7d1b3b1a/wiadomo%C5%9Bci', 'en'],
    [undefined, '/v1/conversations?stan=aktywne', 'en'],
    [undefined, '/v1/rozmowyx', 'en'],
    [undefined, '/rozmowy', 'en'],
    [undefined, '/v2/rozmowy', 'en'],
    [undefined, '/v1/conversations/rozmowy', 'en'],
    [undefined, '/v1/webhooks', 'en'],
    [undefined, '/health/live', 'en'],
  ] as const)('Accept-Language %j on %s -> %s', (header, path, expected) => {
    expect(negotiateDialect(header, path)).toBe(expected);
  });
});

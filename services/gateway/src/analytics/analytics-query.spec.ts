import { DomainError } from '@app/errors';
import { AnalyticsSummaryParams, AnalyticsTimeseriesParams, parseWith, TObject } from '@app/contracts';
import { resolveQueryParameters } from '../http/query-parameters';
import { instantIn, summaryQuery, timeseriesQuery } from './analytics-query';

type Raw = Record<string, string | string[]>;
/** What the analytics routes do with a query string: parameters resolved, schema checked, range made. */
const params = <T extends TObject>(schema: T, raw: Raw) =>
  parseWith(schema, resolveQueryParameters(raw, schema), 'query');
const parseSummaryQuery = (raw: Raw, now: number) => summaryQuery(params(AnalyticsSummaryParams, raw), now);
const parseTimeseriesQuery = (raw: Raw, now: number) =>
  timeseriesQuery(params(AnalyticsTimeseriesParams, raw), now);

const NOW = Date.parse('2026-11-23T10:00:00.000Z');

function fieldErrors(parse: () => unknown): Array<{ field: string; message: string }> {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    return (error as DomainError).errors!;
  }
  throw new Error('expected a validation error');
}

describe('instantIn', () => {
  const iso = (text: string, zone = 'UTC') => {
    const value = instantIn(text, zone);
    return value === undefined ? undefined : new Date(value).toISOString();
  };

  it.each([
    ['2026-03-01', 'UTC', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01', 'Europe/Warsaw', '2026-02-28T23:00:00.000Z'],
    ['2026-03-01T09:15', 'Europe/Warsaw', '2026-03-01T08:15:00.000Z'],
    ['2026-03-01T09:15:30Z', 'Europe/Warsaw', '2026-03-01T09:15:30.000Z'],
    ['2026-03-01T09:15:30.5+01:00', 'UTC', '2026-03-01T08:15:30.500Z'],
    ['2026-03-01T09:15:30.123-0530', 'UTC', '2026-03-01T14:45:30.123Z'],
    ['2026-03-01T09:15:30+02', 'UTC', '2026-03-01T07:15:30.000Z'],
    ['2026-03-01T09:15:30 01:00', 'UTC', '2026-03-01T08:15:30.000Z'],
    ['2026-03-01t09:15:30z', 'UTC', '2026-03-01T09:15:30.000Z'],
    ['2026-03-01T00:00:00.000000Z', 'UTC', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T00:00:00.0001Z', 'UTC', '2026-03-01T00:00:00.001Z'],
    ['2024-02-29', 'UTC', '2024-02-29T00:00:00.000Z'],
    ['1969-12-31', 'UTC', '1969-12-31T00:00:00.000Z'],
    ['0001-01-01', 'UTC', '0001-01-01T00:00:00.000Z'],
    ['0001-01-02', 'Europe/Warsaw', '0001-01-01T22:36:00.000Z'],
    ['0099-03-01T12:00', 'UTC', '0099-03-01T12:00:00.000Z'],
    ['9999-12-31T23:59:59.999', 'UTC', '9999-12-31T23:59:59.999Z'],
  ])('%s in %s', (text, zone, expected) => {
    expect(iso(text, zone)).toBe(expected);
  });

  it.each([
    'yesterday',
    '2026-3-1',
    '2026-02-29',
    '2026-13-01',
    '2026-04-31',
    '2026-03-01T24:00',
    '2026-03-01T09:60',
    '2026-03-01T09:15:61Z',
    '2026-03-01T09:15+24:00',
    '2026-03-01T09',
    '0000-12-31',
    '0001-01-01',
    '9999-12-31T23:00:00-01:00',
    '1764000000',
    '2026-03-01Z',
    ' 2026-03-01',
  ])('refuses %j (in Europe/Warsaw)', (text) => {
    expect(iso(text, 'Europe/Warsaw')).toBeUndefined();
  });
});

describe('analytics query parameters', () => {
  it('defaults to the last 30 days in UTC', () => {
    expect(parseSummaryQuery({}, NOW)).toEqual({
      from: '2026-10-24T10:00:00.000Z',
      to: '2026-11-23T10:00:00.000Z',
      timeZone: 'UTC',
    });
    expect(parseSummaryQuery({ to: '2026-06-30T00:00Z' }, NOW).from).toBe('2026-05-31T00:00:00.000Z');
    expect(parseSummaryQuery({ from: '2026-11-01' }, NOW).to).toBe('2026-11-23T10:00:00.000Z');
  });

  it('takes an empty range and exactly 400 days', () => {
    expect(parseSummaryQuery({ from: '2026-01-01', to: '2026-01-01' }, NOW).from).toBe(
      '2026-01-01T00:00:00.000Z',
    );
    expect(parseSummaryQuery({ from: '2025-01-01', to: '2026-02-05' }, NOW).to).toBe(
      '2026-02-05T00:00:00.000Z',
    );
  });

  it('reads dates in the time zone', () => {
    expect(
      parseTimeseriesQuery(
        { metric: 'messages_sent', from: '2026-03-01', to: '2026-04-01', tz: 'Europe/Warsaw' },
        NOW,
      ),
    ).toEqual({
      from: '2026-02-28T23:00:00.000Z',
      to: '2026-03-31T22:00:00.000Z',
      timeZone: 'Europe/Warsaw',
      metric: 'messages_sent',
      interval: 'day',
    });
  });

  it.each([
    [{ from: '2026-02-01', to: '2026-01-01' }, 'from', 'must not be after to'],
    [{ from: '2025-01-01', to: '2026-02-05T00:00:00.001Z' }, 'to', 'must be at most 400 days after from'],
    [{ from: '2020-01-01' }, 'to', 'must be at most 400 days after from'],
    [{ from: 'last week' }, 'from', 'must be an ISO 8601 date'],
    [{ to: '2026-02-30' }, 'to', 'must be an ISO 8601 date'],
    [{ tz: 'Mars/Olympus_Mons' }, 'tz', 'must be an IANA time zone name'],
    [{ tz: '+01:00' }, 'tz', 'must be an IANA time zone name'],
    [{ from: ['2026-01-01', '2026-01-02'] }, 'from', 'must be given once'],
  ])('refuses %j', (query, field, message) => {
    const errors = fieldErrors(() => parseSummaryQuery(query, NOW));
    expect(errors).toEqual([{ field, message: expect.stringContaining(message) }]);
  });

  it('lists every problem of a timeseries query at once: the schema first, then the range', () => {
    const errors = fieldErrors(() =>
      parseTimeseriesQuery({ metric: 'revenue', interval: 'month', tz: 'Nowhere/City', from: 'x' }, NOW),
    );
    expect(errors.map((error) => error.field)).toEqual(['metric', 'interval']);
    const range = fieldErrors(() =>
      parseTimeseriesQuery({ metric: 'messages_sent', tz: 'Nowhere/City', from: 'x' }, NOW),
    );
    expect(range.map((error) => error.field)).toEqual(['tz', 'from']);
    expect(fieldErrors(() => parseTimeseriesQuery({}, NOW))).toEqual([
      { field: 'metric', message: expect.stringContaining('conversations_started, conversations_closed') },
    ]);
  });
});

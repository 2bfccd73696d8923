import { Type } from '@sinclair/typebox';
import { DomainError } from '@app/errors';
import { DATE_TIME_MESSAGE, parseInstant, STORABLE_INSTANTS, utcMilliseconds } from './instants';
import { parseWith } from './schema-validation';

describe('utcMilliseconds', () => {
  it('takes years 0 to 99 as themselves (Date.UTC reads them as 1900 to 1999)', () => {
    expect(new Date(utcMilliseconds(1, 1, 1)).toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(new Date(utcMilliseconds(99, 12, 31, 23, 59, 59, 999)).toISOString()).toBe(
      '0099-12-31T23:59:59.999Z',
    );
  });
});

describe('parseInstant without a local time zone (the date-time format)', () => {
  const iso = (text: string) => {
    const value = parseInstant(text);
    return value === undefined ? undefined : new Date(value).toISOString();
  };

  it.each([
    ['0001-01-01T00:00:00Z', STORABLE_INSTANTS.earliest],
    ['0001-01-01T01:00:00+01:00', STORABLE_INSTANTS.earliest],
    ['9999-12-31T23:59:59.999Z', STORABLE_INSTANTS.latest],
    ['9999-12-31T22:59:59.999-01:00', STORABLE_INSTANTS.latest],
    ['2026-03-01T09:15:30.123456Z', '2026-03-01T09:15:30.124Z'],
    ['2026-03-01T09:15:30+15:59', '2026-02-28T17:16:30.000Z'],
    ['2026-03-01T09:15:30-1559', '2026-03-02T01:14:30.000Z'],
    ['2026-03-01T09:15Z', '2026-03-01T09:15:00.000Z'],
  ])('%s is %s', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });

  it.each([
    '0000-01-01T00:00:00Z',
    '0000-12-31T23:59:59.999Z',
    '0001-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59.999-00:01',
    '10000-01-01T00:00:00Z',
    '-0001-01-01T00:00:00Z',
    '2026-03-01T09:15:30+16:00',
    '2026-03-01T09:15:30-23:59',
    '2026-03-01T23:59:60Z',
    '2026-02-29T00:00:00Z',
    '2026-03-01T09:15:30',
    '2026-03-01',
  ])('refuses %j', (text) => {
    expect(iso(text)).toBeUndefined();
  });
});

describe('the date-time format', () => {
  const Query = Type.Object({ created_after: Type.String({ format: 'date-time' }) });

  it('answers a date outside the storable range with a 400 naming the field and the range', () => {
    try {
      parseWith(Query, { created_after: '0000-01-01T00:00:00Z' }, 'query');
      throw new Error('expected a validation error');
    } catch (error) {
      expect((error as DomainError).errors).toEqual([{ field: 'created_after', message: DATE_TIME_MESSAGE }]);
    }
    expect(DATE_TIME_MESSAGE).toContain('from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z');
  });
});

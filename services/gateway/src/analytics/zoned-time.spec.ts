import { isTimeZone, offsetAt, wallClockToInstant } from './zoned-time';

const utc = (iso: string) => Date.parse(`${iso}Z`);

describe('zoned time', () => {
  it('knows IANA names in any case, and nothing else', () => {
    expect(isTimeZone('Europe/Warsaw')).toBe(true);
    expect(isTimeZone('europe/warsaw')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Asia/Kathmandu')).toBe(true);
    for (const name of [
      'Mars/Olympus_Mons',
      '+05:00',
      '',
      'Europe/Warsaw ',
      '../etc/passwd',
      'x'.repeat(65),
    ]) {
      expect(isTimeZone(name)).toBe(false);
    }
  });

  it('gives offsets across DST changes', () => {
    expect(offsetAt('Europe/Warsaw', utc('2026-03-29T00:59:59'))).toBe(3600_000);
    expect(offsetAt('Europe/Warsaw', utc('2026-03-29T01:00:00'))).toBe(7200_000);
    expect(offsetAt('Asia/Kathmandu', utc('2026-06-01T00:00:00'))).toBe((5 * 60 + 45) * 60_000);
    expect(offsetAt('America/New_York', utc('2026-01-15T12:00:00'))).toBe(-5 * 3600_000);
  });

  it.each([
    ['an ordinary local time', '2026-01-15T09:30:00', 'Europe/Warsaw', '2026-01-15T08:30:00.000Z'],
    ['summer time', '2026-07-01T00:00:00', 'Europe/Warsaw', '2026-06-30T22:00:00.000Z'],
    [
      'a time skipped by DST: forward by the gap',
      '2026-03-29T02:30:00',
      'Europe/Warsaw',
      '2026-03-29T01:30:00.000Z',
    ],
    ['a repeated time: the later one', '2026-10-25T02:30:00', 'Europe/Warsaw', '2026-10-25T01:30:00.000Z'],
    [
      'a skipped midnight: the first instant of the day',
      '2026-09-06T00:00:00',
      'America/Santiago',
      '2026-09-06T04:00:00.000Z',
    ],
    ['a quarter-hour zone', '2026-06-01T00:00:00', 'Asia/Kathmandu', '2026-05-31T18:15:00.000Z'],
    ['UTC', '2026-06-01T00:00:00.123', 'UTC', '2026-06-01T00:00:00.123Z'],
  ])('resolves %s', (_, wallClock, zone, expected) => {
    expect(new Date(wallClockToInstant(utc(wallClock), zone)).toISOString()).toBe(expected);
  });
});

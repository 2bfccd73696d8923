import { localIsoString } from './local-iso-string';

describe('localIsoString', () => {
  const instant = Date.parse('2026-03-28T23:00:00.000Z');

  it.each([
    [3600, '2026-03-29T00:00:00.000+01:00'],
    [7200, '2026-03-29T01:00:00.000+02:00'],
    [-4 * 3600, '2026-03-28T19:00:00.000-04:00'],
    [5 * 3600 + 45 * 60, '2026-03-29T04:45:00.000+05:45'],
    [-(9 * 3600 + 30 * 60), '2026-03-28T13:30:00.000-09:30'],
    [0, '2026-03-28T23:00:00.000Z'],
    [-2670, '2026-03-28T23:00:00.000Z'],
  ])('offset %i s', (offset, expected) => {
    expect(localIsoString(instant, offset)).toBe(expected);
  });
});

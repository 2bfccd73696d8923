import { DAY_MS, utcMilliseconds } from '@app/contracts';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** True for an IANA time zone name (any case) that this runtime knows. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return false;
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC at an instant, in milliseconds (whole seconds). */
export function offsetAt(timeZone: string, instantMs: number): number {
  const parts = formatter(timeZone).formatToParts(new Date(instantMs));
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)!.value);
  // Year 1 BC is ISO 8601's year 0, 2 BC its -1.
  const year = parts.find((p) => p.type === 'era')?.value === 'BC' ? 1 - part('year') : part('year');
  const wallClock = utcMilliseconds(
    year,
    part('month'),
    part('day'),
    part('hour'),
    part('minute'),
    part('second'),
  );
  return wallClock - Math.floor(instantMs / 1000) * 1000;
}

/**
 * The instant a wall-clock time (given as milliseconds as if it were UTC) names in a zone, resolved
 * as Postgres resolves it, so that a local midnight here is a bucket boundary there: a time that
 * a DST change repeats is taken in its later occurrence, one it skips moves forward by the gap.
 */
export function wallClockToInstant(wallClockMs: number, timeZone: string): number {
  const before = offsetAt(timeZone, wallClockMs - DAY_MS);
  const after = offsetAt(timeZone, wallClockMs + DAY_MS);
  const valid = [before, after]
    .map((offset) => wallClockMs - offset)
    .filter((instant) => offsetAt(timeZone, instant) === wallClockMs - instant);
  return valid.length > 0 ? Math.max(...valid) : wallClockMs - before;
}

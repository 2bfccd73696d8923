const pad = (value: number) => String(value).padStart(2, '0');

/**
 * An instant as local time with its UTC offset (`2026-03-29T00:00:00.000+01:00`), `Z` when the
 * offset is zero. Offsets with seconds (local mean time, before 1980) cannot be written in
 * ISO 8601 and are given in UTC.
 */
export function localIsoString(instantMs: number, offsetSeconds: number): string {
  if (offsetSeconds === 0 || offsetSeconds % 60 !== 0) return new Date(instantMs).toISOString();
  const local = new Date(instantMs + offsetSeconds * 1000).toISOString().slice(0, -1);
  const minutes = Math.abs(offsetSeconds) / 60;
  return `${local}${offsetSeconds < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

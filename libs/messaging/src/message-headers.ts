/**
 * A message's AMQP headers as published: none at all rather than an empty table. With tracing
 * off (the default) a trace context is empty, and an empty table still costs amqplib its
 * encoding, the broker its decoding and a stream its stored copy of every event
 * (BENCHMARKS.md, "Request path against the baseline").
 */
export function headersOrNone(
  headers: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (headers) for (const _name in headers) return headers;
  return undefined;
}

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

/**
 * On an RPC reply: how long the service spent on the command, from its delivery to the reply,
 * in whole microseconds. The caller subtracts it from its own round trip to learn how long the
 * command waited outside the service (the broker's queue and the wire), each side on its own
 * clock (RpcTimingSink). An optional header: a reply without it (an older service) is answered
 * as ever, and the time is not reported.
 */
export const HANDLED_US_HEADER = 'x-handled-us';

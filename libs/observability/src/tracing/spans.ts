import {
  type Context,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
} from '@opentelemetry/api';

/**
 * What the services' code uses of OpenTelemetry: the spans, all opened by hand (the gateway's
 * request, RPC over RabbitMQ, batched statements, the outbox, the fan-out, webhook attempts), and
 * W3C trace context carried in AMQP headers, CloudEvents and webhook requests (docs/operations.md
 * "Tracing"). A span's parent is always given, as a Context the code carries along with the
 * request or command it belongs to: no context manager tracks an "active" span across awaits
 * (Node's AsyncLocalStorage would put a hook on every promise of the process). With the SDK not
 * started every call here is the API's no-op.
 */
const tracer = trace.getTracer('conversation-messaging-service');

/** A message's headers, an event's attributes: wherever `traceparent` and `tracestate` travel. */
export type TraceCarrier = Record<string, unknown> | undefined;

const carrierGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
  },
};

/** The trace context a carrier holds (none: the root, so a span started from it begins a trace). */
export function contextFrom(carrier: TraceCarrier): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier, carrierGetter) : ROOT_CONTEXT;
}

/** The context whose span is `span`: to be a later span's parent or link, or to send on. */
export function contextOf(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}

/** `traceparent` (and `tracestate` if any) of `context`'s span, when tracing is on: the headers to send on. */
export function traceHeaders(context: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context, headers);
  return headers;
}

export interface SpanOptions {
  kind: SpanKind;
  /** The parent's context; none: the span begins a trace. */
  parent?: Context;
  /** Contexts this span served besides its parent (a batched statement's commands). */
  links?: Context[];
  attributes?: Attributes;
}

export function startSpan(name: string, options: SpanOptions): Span {
  const links: Link[] = [];
  for (const linked of options.links ?? []) {
    const spanContext = trace.getSpanContext(linked);
    if (spanContext && isSpanContextValid(spanContext)) links.push({ context: spanContext });
  }
  return tracer.startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links },
    options.parent ?? ROOT_CONTEXT,
  );
}

/** Ends `span`, as failed when `error` (an exception caught, or what went wrong) is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    if (error instanceof Error) span.recordException(error);
    const message = error instanceof Error ? error.message : typeof error === 'string' ? error : 'failed';
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  span.end();
}

export { SpanKind, type Context, type Span } from '@opentelemetry/api';

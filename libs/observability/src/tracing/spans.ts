import {
  context,
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
 * What the services' code uses of OpenTelemetry: spans opened by hand where no instrumentation
 * exists (RPC over RabbitMQ, batched statements, the outbox, the fan-out, webhook attempts) and W3C
 * trace context carried in AMQP headers, CloudEvents and webhook requests (docs/operations.md
 * "Tracing"). With the SDK not started every call here is the API's no-op.
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

/** `traceparent` (and `tracestate` if any) of `span`, or of the active span: the headers to send on. */
export function traceHeaders(span?: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(span ? trace.setSpan(ROOT_CONTEXT, span) : context.active(), headers);
  return headers;
}

/** The active span's `traceparent`, if a sampled or unsampled span is active and tracing is on. */
export function currentTraceparent(): string | undefined {
  return traceHeaders().traceparent;
}

export interface SpanOptions {
  kind: SpanKind;
  /** Default: the active context. */
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
    options.parent ?? context.active(),
  );
}

/** Runs `work` with `span` active (its children, pg's and Redis's included, hang under it). */
export function withSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(context.active(), span), work);
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

/** The active context, to be a later span's parent or link (a call waiting for its batch). */
export const activeContext = (): Context => context.active();

export { SpanKind, type Context, type Span } from '@opentelemetry/api';

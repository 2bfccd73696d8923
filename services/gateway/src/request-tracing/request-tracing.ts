import type { FastifyInstance } from 'fastify';
import {
  type Context,
  contextFrom,
  contextOf,
  endSpan,
  type Span,
  SpanKind,
  startSpan,
} from '@app/observability';
import { isOperationsRoute } from '../health/operations-routes';
import { routeTemplate } from '../http/api-routes';
import { addResponseRecorder } from '../http/response-records';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span while it is answered (tracing on). */
    span?: Span;
    /** The trace context of the request's span: its RPC calls' spans are its children. */
    trace?: Context;
  }
}

/**
 * One server span per request, from its arrival to its response however it ends (docs/operations.md
 * "Tracing"), continuing the caller's W3C `traceparent` if well-formed, else beginning a trace.
 * Health checks and scrapes are not traced: they would drown the traces that matter. Registered
 * only when tracing is on.
 */
export function registerRequestTracing(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (isOperationsRoute(request)) return done();
    const route = routeTemplate(request);
    const span = startSpan(route === 'unmatched' ? request.method : `${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      parent: contextFrom(request.headers),
      attributes: { 'app.request_id': request.id },
    });
    request.span = span;
    request.trace = contextOf(span);
    done();
  });
  addResponseRecorder(fastify, (request, reply) => {
    const span = request.span;
    if (!span) return;
    request.span = undefined;
    span.setAttribute('http.response.status_code', reply.statusCode);
    endSpan(span, reply.statusCode >= 500 ? `HTTP ${reply.statusCode}` : undefined);
  });
}

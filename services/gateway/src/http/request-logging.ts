import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { routeTemplate } from './api-routes';
import { addResponseRecorder } from './response-records';

/** Health, metrics and docs: polled all the time, so their lines are debug, not info. */
const OPERATIONS_PATH = /^\/(health|metrics|docs|openapi)/;

/**
 * One JSON line per request, written when its response has been sent, whatever answered it (a
 * handler, the admission hook, the catch-all route): request_id, account_id (when
 * authenticated), method, route (the template, not the URL, so no ids or query strings), status
 * and duration_ms; a stream adds events_sent, and has its line whoever ends it. Neither headers
 * nor bodies are logged. A Fastify hook with the service's own logger: no per-request child
 * logger, no middleware.
 */
export function registerRequestLog(fastify: FastifyInstance, logger: Logger): void {
  addResponseRecorder(fastify, (request, reply) => {
    // A shed request is counted and summed up by the shedder: a line each would cost more than refusing it.
    if (!request.shed) writeRequestLine(logger, request, reply);
  });
}

function writeRequestLine(logger: Logger, request: FastifyRequest, reply: FastifyReply): void {
  const status = reply.statusCode;
  const level = status >= 500 ? 'error' : OPERATIONS_PATH.test(request.url) ? 'debug' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  logger[level](
    {
      request_id: request.id,
      account_id: request.principal?.accountId,
      method: request.method,
      route: routeTemplate(request),
      status,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      events_sent: request.streamed?.eventsSent,
    },
    'request completed',
  );
}

type FrameworkErrorHandler = (error: Error, request: FastifyRequest, reply: FastifyReply) => void;

/**
 * A URL Fastify cannot even decode is answered by its framework-error handler, before any hook:
 * this gives such a request its line too, once its response is sent.
 */
export function withRequestLine(logger: Logger, handler: FrameworkErrorHandler): FrameworkErrorHandler {
  return (error, request, reply) => {
    reply.raw.once('finish', () => writeRequestLine(logger, request, reply));
    handler(error, request, reply);
  };
}

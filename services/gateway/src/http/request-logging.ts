import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, RequestMethod } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { routeTemplate } from './api-routes';

/** Health, metrics and docs: polled all the time, so their lines are debug, not info. */
const OPERATIONS_PATH = /^\/(health|metrics|docs|openapi)/;

/**
 * pino-http (through nestjs-pino) sees Node's request and response; the Fastify reply it belongs
 * to holds what the line needs (route template, caller, precise duration).
 */
const replies = new WeakMap<IncomingMessage, FastifyReply>();

/** A request line's fields besides request_id. */
function lineFor(reply: FastifyReply | undefined, req: IncomingMessage, res: ServerResponse) {
  return {
    account_id: reply?.request.principal?.accountId,
    method: req.method,
    route: reply ? routeTemplate(reply.request) : 'unmatched',
    status: res.statusCode,
    duration_ms: reply ? Math.round(reply.elapsedTime * 10) / 10 : undefined,
  };
}

/**
 * One JSON line per request, written when the response has been sent, whatever answered it (a
 * handler, the authentication or rate-limit hook, the not-found handler): request_id, account_id
 * (when authenticated), method, route (the template, not the URL, so no ids or query strings),
 * status and duration_ms. Neither headers nor bodies are logged.
 */
export function requestLoggingModule(logger: Logger): DynamicModule {
  const line = (req: IncomingMessage, res: ServerResponse) => lineFor(replies.get(req), req, res);
  return LoggerModule.forRoot({
    pinoHttp: {
      logger,
      quietReqLogger: true,
      quietResLogger: true,
      customAttributeKeys: { reqId: 'request_id' },
      customLogLevel: (req, res) =>
        res.statusCode >= 500 ? 'error' : OPERATIONS_PATH.test(req.url ?? '') ? 'debug' : 'info',
      customSuccessObject: line,
      customErrorObject: line,
      customSuccessMessage: () => 'request completed',
      customErrorMessage: () => 'request completed',
    },
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
  });
}

/** Remembers each request's reply for its line; must run before any hook that may answer the request (authentication). */
export function trackRepliesForLogging(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    replies.set(request.raw, reply);
    done();
  });
}

type FrameworkErrorHandler = (error: Error, request: FastifyRequest, reply: FastifyReply) => void;

/**
 * A URL Fastify cannot even decode is answered by its framework-error handler, before any hook
 * and so before pino-http: this gives such a request its line too, once its response is sent.
 */
export function withRequestLine(logger: Logger, handler: FrameworkErrorHandler): FrameworkErrorHandler {
  return (error, request, reply) => {
    reply.raw.once('finish', () =>
      logger.info({ request_id: request.id, ...lineFor(reply, request.raw, reply.raw) }, 'request completed'),
    );
    handler(error, request, reply);
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, RequestMethod } from '@nestjs/common';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';

/** Health, metrics and docs: polled all the time, so their lines are debug, not info. */
const OPERATIONS_PATH = /^\/(health|metrics|docs|openapi)/;

/**
 * pino-http (through nestjs-pino) sees Node's request and response; the Fastify reply it belongs
 * to holds what the line needs (route template, caller, precise duration).
 */
const replies = new WeakMap<IncomingMessage, FastifyReply>();

/**
 * One JSON line per request, written when the response has been sent, whatever answered it (a
 * handler, the authentication or rate-limit hook, the not-found handler): request_id, account_id
 * (when authenticated), method, route (the template, not the URL, so no ids or query strings),
 * status and duration_ms. Neither headers nor bodies are logged.
 */
export function requestLoggingModule(logger: Logger): DynamicModule {
  const line = (req: IncomingMessage, res: ServerResponse) => {
    const reply = replies.get(req);
    return {
      account_id: reply?.request.principal?.accountId,
      method: req.method,
      route: reply?.request.routeOptions.url ?? 'unmatched',
      status: res.statusCode,
      duration_ms: reply ? Math.round(reply.elapsedTime * 10) / 10 : undefined,
    };
  };
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

/** Must run before any hook that may answer the request (authentication), so every line has its reply. */
export function trackRepliesForLogging(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    replies.set(request.raw, reply);
    done();
  });
}

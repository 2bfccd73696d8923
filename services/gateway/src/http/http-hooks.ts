import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DomainError } from '@app/errors';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { sendProblem } from './problem.filter';

const isApiPath = (url: string) => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');

/**
 * Fastify-level hooks, so they run in DESIGN.md's order: authentication in onRequest, before the
 * body is read (401 before 413/415/400); request id on every response; one log line per request.
 */
export function registerHttpHooks(fastify: FastifyInstance, authenticator: ApiKeyAuthenticator, logger: Logger): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id);
    if (!isApiPath(request.url)) return;
    try {
      request.principal = await authenticator.authenticate(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return sendProblem(request, reply, error);
    }
  });

  // An absent body is an empty object; a body that is JSON but not an object is refused here,
  // before DTO validation, with the same 400 shape.
  fastify.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST' && request.method !== 'PATCH' && request.method !== 'PUT') return;
    if (request.body === undefined) {
      request.body = {};
    } else if (request.body === null || typeof request.body !== 'object' || Array.isArray(request.body)) {
      return sendProblem(request, reply, DomainError.validation([{ field: 'body', message: 'must be a JSON object' }]));
    }
  });

  fastify.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    logger.info(
      {
        request_id: request.id,
        account_id: request.principal?.accountId,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
  });
}

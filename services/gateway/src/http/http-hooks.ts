import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@app/errors';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { RateLimits } from '../rate-limit/rate-limits';
import { secondsUntilSlotFrees, setRateLimitHeaders } from '../rate-limit/rate-limit-headers';
import type { LimitDecision } from '../rate-limit/sliding-window-limiter';
import { sendProblem } from './problem.filter';

const isApiPath = (url: string) => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');

/**
 * Fastify-level hooks, so they run in DESIGN.md's order: authentication in onRequest, before the
 * body is read (401 before 413/415/400); request id on every response. The request's log line is
 * request-logging.ts's.
 */
export function registerHttpHooks(
  fastify: FastifyInstance,
  authenticator: ApiKeyAuthenticator,
  rateLimits: RateLimits,
): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id);
    if (!isApiPath(request.url)) return; // health, metrics and docs: neither authenticated nor limited
    try {
      request.principal = await authenticator.authenticate(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // Only a bad key counts against the address (not Postgres being unreachable).
      if (error.code !== 'unauthorized') return sendProblem(request, reply, error);
      const perIp = await rateLimits.admitFailedAuthentication(request.ip);
      if (perIp && !perIp.admitted) {
        reply.header('retry-after', String(Math.max(1, secondsUntilSlotFrees(perIp))));
        return sendProblem(request, reply, tooManyFailures());
      }
      return sendProblem(request, reply, error);
    }
    try {
      const decision = await rateLimits.checkAccount(request.principal);
      if (!decision) return;
      setRateLimitHeaders(reply, decision, rateLimits.windowSeconds);
      if (!decision.admitted) return sendProblem(request, reply, overQuota(decision));
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
      return sendProblem(
        request,
        reply,
        DomainError.validation([{ field: 'body', message: 'must be a JSON object' }]),
      );
    }
  });
}

function overQuota(decision: LimitDecision): DomainError {
  return new DomainError(
    'rate_limited',
    `This account's plan allows ${decision.limit} requests per window; retry after ${secondsUntilSlotFrees(decision)} s.`,
  );
}

function tooManyFailures(): DomainError {
  return new DomainError(
    'rate_limited',
    'Too many requests with a missing or invalid API key from this address.',
  );
}

import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { DomainError } from '@app/errors';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { RateLimits } from '../rate-limit/rate-limits';
import { secondsUntilSlotFrees, setRateLimitHeaders } from '../rate-limit/rate-limit-headers';
import type { LimitDecision } from '../rate-limit/sliding-window-limiter';
import { sendProblem } from './problem.filter';

/**
 * The first checks of every API request, in DESIGN.md's order: authentication (401), then the
 * plan's rate limit (429), both before the body is read. It is attached to each API route itself
 * (api-routes.ts), so no spelling of a URL can reach a handler without it.
 */
export function apiAdmission(
  authenticator: ApiKeyAuthenticator,
  rateLimits: RateLimits,
): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (authorizationHeaders(request) > 1) {
      return sendProblem(
        request,
        reply,
        new DomainError('invalid_request', 'Send one Authorization header; this request has several.'),
      );
    }
    try {
      request.principal = await authenticator.authenticate(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
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
  };
}

/**
 * Node keeps only the first of repeated Authorization headers, so a second one (another
 * account's key, say) would go unseen: they are counted in the raw headers.
 */
function authorizationHeaders(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') count++;
  return count;
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

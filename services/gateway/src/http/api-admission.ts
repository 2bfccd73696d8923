import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { DomainError, overloaded } from '@app/errors';
import { OPERATION_SCOPES, type Scope } from '../accounts/scopes';
import type { ApiKeyAuthenticator, Principal } from '../auth/api-key-authenticator';
import type { StreamTokens } from '../auth/stream-tokens';
import { RateLimits } from '../rate-limit/rate-limits';
import { secondsUntilSlotFrees, setRateLimitHeaders } from '../rate-limit/rate-limit-headers';
import type { LimitDecision } from '../rate-limit/sliding-window-limiter';
import { routeTemplate } from './api-routes';
import { sendProblem } from './problem.filter';
import { headerCount } from './request-framing';

/** What admission asks of the load shedder (load-shedding.ts), which it does not import. */
export interface Shedding {
  tooLateForCheck(waitedMs: number, budgetMs: number): boolean;
  loopLate(budgetMs: number): boolean;
  countShed(reason: 'queued' | 'limiter_late'): void;
}

/**
 * The first checks of every API request, in the documented order (docs/api-conventions.md):
 * authentication (401), the key's scope for the operation (decided right after it, answered 403
 * after the request is counted), the plan's rate limit (429), all before the body is read. It is
 * attached to each API route itself (api-routes.ts), so no spelling of a URL can reach a handler
 * without it.
 */
export function apiAdmission(
  authenticator: ApiKeyAuthenticator,
  rateLimits: RateLimits,
  streamTokens: StreamTokens,
  shedder?: Shedding,
  limiterBudgetMs = 0,
): onRequestAsyncHookHandler {
  const gatewayLate = shedder && (() => shedder.loopLate(limiterBudgetMs));
  /**
   * The API key of the Authorization header or, on the stream without that header, of its
   * `?token=` (a stream token authenticates nothing else: elsewhere the header is required).
   */
  const authenticated = async (request: FastifyRequest): Promise<Principal> => {
    const token = (request.query as { token?: unknown } | undefined)?.token;
    const byToken =
      request.routeOptions.config?.endpoint?.streamToken && request.headers.authorization === undefined;
    if (!byToken || typeof token !== 'string')
      return authenticator.authenticate(request.headers.authorization);
    const issuedTo = await streamTokens.redeem(token);
    if (!issuedTo) throw new DomainError('unauthorized', 'The stream token is not valid or has expired.');
    return authenticator.authenticateKeyId(issuedTo.keyId);
  };

  return async (request: FastifyRequest, reply: FastifyReply) => {
    // Node keeps only the first of repeated Authorization headers: another account's key would go unseen.
    if (headerCount(request.raw.rawHeaders, 'authorization') > 1) {
      return sendProblem(
        request,
        reply,
        new DomainError('invalid_request', 'Send one Authorization header; this request has several.'),
      );
    }
    const authStart = performance.now();
    try {
      request.principal = await authenticated(request);
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
    const authEnd = performance.now();
    const missingScope = scopeMissing(request, request.principal);
    // The time it queued for the event loop since it was admitted (its key's read aside): shed now
    // rather than make a check whose answer would come too late (docs/operations.md, "Load shedding").
    const waited = authStart - request.admittedAt + (performance.now() - authEnd);
    if (
      shedder &&
      rateLimits.enabled &&
      request.admittedAt > 0 &&
      shedder.tooLateForCheck(waited, limiterBudgetMs)
    ) {
      shedder.countShed('queued');
      return sendProblem(request, reply, overloaded());
    }
    try {
      const decision = await rateLimits.checkAccount(request.principal, gatewayLate);
      if (decision) {
        setRateLimitHeaders(reply, decision, rateLimits.windowSeconds);
        if (!decision.admitted) return sendProblem(request, reply, overQuota(decision));
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.code === 'overloaded') shedder?.countShed('limiter_late');
      return sendProblem(request, reply, error);
    }
    if (missingScope) {
      // RFC 6750 section 3.1: the challenge names the scope the request needs.
      reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${missingScope}"`);
      return sendProblem(request, reply, insufficientScope(missingScope));
    }
  };
}

/**
 * The scope the request's operation needs and its key lacks, if any. Only the catch-all (which
 * answers 404 and 405) needs none; any other route under /v1 without an operation in
 * OPERATION_SCOPES is refused (a 500) rather than let through.
 */
function scopeMissing(request: FastifyRequest, principal: Principal): Scope | undefined {
  if (routeTemplate(request) === 'unmatched') return undefined;
  const operation = request.routeOptions.config?.endpoint?.operationId;
  const needed = operation === undefined ? undefined : OPERATION_SCOPES[operation];
  if (needed === undefined)
    throw new Error(`route ${routeTemplate(request)} has no operation in OPERATION_SCOPES`);
  return principal.scopes.includes(needed) ? undefined : needed;
}

function insufficientScope(scope: Scope): DomainError {
  return new DomainError(
    'insufficient_scope',
    `This API key does not have the scope ${scope}, which this operation needs.`,
  );
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

import type { FastifyInstance } from 'fastify';
import { DomainError } from '@app/errors';
import { isOperationsRoute } from '../health/operations-routes';
import { sendProblem } from '../http/problem.filter';

declare module 'fastify' {
  interface FastifyRequest {
    /** When its answer is due (a `performance.now()` time): arrival + RPC_TIMEOUT_MS. */
    deadline?: number;
    /** Its response has begun to be sent (its onSend hooks run): the deadline answers no more. */
    answering: boolean;
  }
}

/**
 * Every request is answered within RPC_TIMEOUT_MS of its arrival, whatever hangs: the look-up of its API key or Idempotency-Key on a stalled Postgres, the broker, a service.
 * The RPC client gets the same deadline (CallContext), so the command's time in the queue ends
 * with it; a request still unanswered when it passes gets a 504 from here, or a 408 if its body
 * is what has not arrived (Fastify reads the whole body before anything is sent anywhere, so
 * nothing was). Work under way then finishes in the background, within its own bounds.
 *
 * Registered before any other onSend hook: a response whose sending has begun (its onSend hooks
 * may still be storing an Idempotency-Key) is never answered a second time.
 *
 * Per request it costs a timer, one listener and a field of the request (decorated, so every
 * request has the same shape): no hooks around the body's reading, no weak set of requests for
 * the collector to sweep (BENCHMARKS.md, "Request path against the baseline").
 */
export function registerRequestDeadline(fastify: FastifyInstance, timeoutMs: number): void {
  fastify.decorateRequest('answering', false);
  fastify.addHook('onRequest', (request, reply, done) => {
    if (isOperationsRoute(request)) return done();
    request.deadline = performance.now() + timeoutMs;
    const timer = setTimeout(() => {
      if (request.answering || reply.sent) return;
      if (!request.raw.complete) {
        // The client has not sent its body: nothing went upstream, and the connection is closed,
        // since the rest of the body may still come where the next request would start.
        reply.header('connection', 'close');
        sendProblem(request, reply, bodyTimedOut(timeoutMs));
      } else {
        sendProblem(request, reply, timedOut(timeoutMs));
      }
    }, timeoutMs);
    // A response closes once: `on` spares the wrapper `once` would allocate per request.
    reply.raw.on('close', () => clearTimeout(timer));
    done();
  });
  fastify.addHook('onSend', (request, _reply, payload, done) => {
    request.answering = true;
    done(null, payload);
  });
}

function timedOut(timeoutMs: number): DomainError {
  return new DomainError('upstream_timeout', `No answer could be given within ${timeoutMs} ms.`);
}

function bodyTimedOut(timeoutMs: number): DomainError {
  return new DomainError(
    'request_timeout',
    `The request body did not arrive within ${timeoutMs} ms; nothing was done. Send it again.`,
  );
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '@app/errors';
import { isOperationsRoute } from '../health/operations-routes';
import { sendProblem } from '../http/problem.filter';

declare module 'fastify' {
  interface FastifyRequest {
    /** When its answer is due (a `performance.now()` time): arrival + RPC_TIMEOUT_MS. */
    deadline?: number;
  }
}

/**
 * Every request is answered within RPC_TIMEOUT_MS of its arrival, whatever hangs: the look-up of its API key or Idempotency-Key on a stalled Postgres, the broker, a service.
 * The RPC client gets the same deadline (CallContext), so the command's time in the queue ends
 * with it; a request still unanswered when it passes gets a 504 from here, or a 408 if its body
 * is what has not arrived (then nothing was sent anywhere). Work under way then finishes in the
 * background, within its own bounds.
 *
 * Registered before any other onSend hook: a response whose sending has begun (its onSend hooks
 * may still be storing an Idempotency-Key) is never answered a second time.
 */
export function registerRequestDeadline(fastify: FastifyInstance, timeoutMs: number): void {
  const answering = new WeakSet<FastifyRequest>();
  const readingBody = new WeakSet<FastifyRequest>();
  fastify.addHook('onRequest', (request, reply, done) => {
    if (isOperationsRoute(request)) return done();
    request.deadline = performance.now() + timeoutMs;
    const timer = setTimeout(() => {
      if (answering.has(request) || reply.sent) return;
      if (readingBody.has(request) && !request.raw.complete) {
        // The client has not sent its body: nothing went upstream, and the connection is closed,
        // since the rest of the body may still come where the next request would start.
        reply.header('connection', 'close');
        sendProblem(request, reply, bodyTimedOut(timeoutMs));
      } else {
        sendProblem(request, reply, timedOut(timeoutMs));
      }
    }, timeoutMs);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
  // Fastify reads the body between these two hooks.
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    readingBody.add(request);
    done(null, payload);
  });
  fastify.addHook('preValidation', (request, _reply, done) => {
    readingBody.delete(request);
    done();
  });
  fastify.addHook('onSend', (request, _reply, payload, done) => {
    answering.add(request);
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

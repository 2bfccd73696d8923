import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { isStorableText } from '@app/contracts';
import { orDatabaseUnavailable, retryWhileDatabaseUnavailable } from '@app/database';
import { DomainError } from '@app/errors';
import { sendProblem } from '../http/problem.filter';
import { commandIdFor, hashBody } from './key-hashes';
import { IdempotencyClaim, IdempotencyRepository, StoredIdempotencyKey } from './idempotency.repository';
import { REPLAYED_HEADER, ReplayedResponse } from './replayed-response';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` on POST (docs/api-conventions.md), as two Fastify hooks: before the handler (preHandler,
 * once the caller is authenticated and the body parsed) the key is claimed, or its stored response
 * replayed, or the request refused (422 for another path or body, 409 while the first is in
 * flight); when the response is sent (onSend) it is stored, exactly as sent. 5xx outcomes
 * release the key so the client can retry; the retry carries the same command id, so the
 * services apply the command once and answer a retry with the first result.
 *
 * A claim that is never completed or released (its gateway died, Postgres was unreachable) holds
 * the key only for its lease, about the RPC timeout from the request's arrival, then a retry takes
 * it over; a claim that reaches Postgres only after its request was answered holds it no longer.
 */
export class IdempotencyHooks {
  private readonly claims = new WeakMap<FastifyRequest, IdempotencyClaim>();
  /** Replays answered by the service again under the first command id (secretInResponse). */
  private readonly reasked = new WeakSet<FastifyRequest>();

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly logger: Logger,
  ) {}

  /**
   * Callback hooks: most requests carry no key, and they pass through without a promise. One that
   * answers the request itself (a replay, a conflict) does not call `done`.
   */
  register(fastify: FastifyInstance): void {
    fastify.addHook('preHandler', (request, reply, done) => {
      const header = request.headers['idempotency-key'];
      const accountId = request.principal?.accountId;
      if (header === undefined || !accountId || !request.routeOptions.config?.endpoint?.idempotent)
        return done();
      this.claimOrReplay(request, reply, header, accountId).then((answered) => {
        if (!answered && !reply.sent) done();
      }, done);
    });
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (this.reasked.has(request)) reply.header(REPLAYED_HEADER, 'true');
      const claim = this.claims.get(request);
      if (!claim) return done(null, payload);
      this.claims.delete(request);
      this.settle(claim, request, reply, payload).then(() => done(null, payload), done);
    });
  }

  /** Resolves with the reply when it answered the request itself. */
  private async claimOrReplay(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string | string[],
    accountId: string,
  ): Promise<FastifyReply | undefined> {
    const key = Array.isArray(header) ? header[0] : header;
    if (Array.isArray(header) || !KEY_PATTERN.test(key)) {
      return sendProblem(request, reply, invalidKey());
    }
    const fingerprint = {
      method: request.method,
      path: decodePath(request.url),
      bodyHash: hashBody(request.body),
    };
    const arrivedAt = Date.now() - reply.elapsedTime;
    let outcome: Awaited<ReturnType<IdempotencyRepository['claim']>>;
    const token = randomUUID();
    try {
      // Held through a Postgres failover until the request's deadline (the claim is safe to repeat).
      outcome = await orDatabaseUnavailable(() =>
        retryWhileDatabaseUnavailable(
          () => this.keys.claim(accountId, key, { ...fingerprint, arrivedAt }, token),
          {
            answerBy: answerBy(request.deadline),
          },
        ),
      );
    } catch (error) {
      if (error instanceof DomainError) return sendProblem(request, reply, error);
      throw error;
    }
    if ('existing' in outcome) {
      const conflict = replayOrConflict(outcome.existing, fingerprint);
      if (!(conflict instanceof ReplayedResponse)) return sendProblem(request, reply, conflict);
      if (conflict.statusCode < 300 && request.routeOptions.config?.endpoint?.secretInResponse) {
        // Stored without its secret: the service answers the first command's reply again, in full.
        this.reasked.add(request);
        request.commandId = commandIdFor(accountId, key);
        return undefined;
      }
      return conflict.send(reply);
    }
    if (reply.sent) {
      // Answered meanwhile (the request's deadline passed while the claim waited for Postgres).
      this.release(outcome.claim);
      return undefined;
    }
    this.claims.set(request, outcome.claim);
    request.commandId = commandIdFor(accountId, key);
    return undefined;
  }

  /**
   * Stores what is being sent, waiting at most until the request's deadline (if Postgres does not
   * answer by then the claim simply lapses); a 5xx, or the services saying the command id belongs
   * to another request, frees the key instead.
   */
  private async settle(
    claim: IdempotencyClaim,
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
  ): Promise<void> {
    // A body is a string (serialized here) or bytes (a service's JSON sent as it is).
    const sent = Buffer.isBuffer(payload)
      ? payload.toString('utf8')
      : typeof payload === 'string'
        ? payload
        : '';
    const body =
      reply.statusCode < 300 && request.routeOptions.config?.endpoint?.secretInResponse
        ? withoutSecret(sent)
        : sent;
    if (reply.statusCode >= 500 || isReusedElsewhere(reply.statusCode, body)) {
      this.release(claim);
      return;
    }
    const stored = retryWhileDatabaseUnavailable(() => this.keys.complete(claim, reply.statusCode, body), {
      answerBy: answerBy(request.deadline),
    }).catch((error: unknown) => {
      this.logger.warn(
        { err: (error as Error).message, request_id: request.id },
        'idempotency key not stored',
      );
    });
    await untilDeadline(stored, request.deadline);
  }

  private release(claim: IdempotencyClaim): void {
    this.keys.release(claim).catch((error: unknown) => {
      this.logger.warn(
        { err: (error as Error).message },
        'idempotency key not released; it frees itself when its lease ends',
      );
    });
  }
}

/** A response body without its `secret` (what a replay of it asks the service for again). */
function withoutSecret(body: string): string {
  try {
    const { secret: _secret, ...rest } = JSON.parse(body) as Record<string, unknown>;
    return JSON.stringify(rest);
  } catch {
    return '';
  }
}

function invalidKey(): DomainError {
  return DomainError.validation([
    { field: 'Idempotency-Key', message: 'must be one value of 1 to 255 printable ASCII characters' },
  ]);
}

/** What an already-used key gives: its stored response, or why it cannot be replayed. */
function replayOrConflict(
  existing: StoredIdempotencyKey,
  fingerprint: { method: string; path: string; bodyHash: string },
): DomainError | ReplayedResponse {
  if (
    existing.method !== fingerprint.method ||
    existing.path !== fingerprint.path ||
    existing.bodyHash !== fingerprint.bodyHash
  ) {
    return new DomainError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different path or body; use a new key for a new request.',
    );
  }
  if (existing.statusCode === null) {
    return new DomainError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still in progress; retry shortly.',
    );
  }
  return new ReplayedResponse(existing.statusCode, existing.responseBody);
}

/**
 * The conversations or webhooks service found the command id (derived from this key) recorded for
 * another operation or payload: this request did not get the key, the earlier one keeps it.
 */
function isReusedElsewhere(statusCode: number, body: string): boolean {
  if (statusCode !== 422) return false;
  try {
    return (JSON.parse(body) as { code?: unknown }).code === 'idempotency_key_reused';
  } catch {
    return false;
  }
}

/** A request's deadline (a performance.now() time) as the Date.now() time the database retries use. */
function answerBy(deadline: number | undefined): number | undefined {
  return deadline === undefined ? undefined : Date.now() + (deadline - performance.now());
}

/** Waits for `work`, but not past `deadline` (a performance.now() time). */
async function untilDeadline(work: Promise<unknown>, deadline: number | undefined): Promise<void> {
  if (deadline === undefined) {
    await work;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
  });
  await Promise.race([work, expired]);
  clearTimeout(timer);
}

function decodePath(url: string): string {
  const path = url.split('?')[0];
  try {
    const decoded = decodeURIComponent(path);
    // A NUL or lone surrogate cannot be stored in Postgres text: such a path is kept as sent.
    return isStorableText(decoded) ? decoded : path;
  } catch {
    return path;
  }
}

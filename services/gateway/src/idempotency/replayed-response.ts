import { PROBLEM_CONTENT_TYPE } from '@app/errors';
import type { FastifyReply } from 'fastify';

export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Thrown to short-circuit a request whose Idempotency-Key already has a stored response; the
 * problem filter sends that response verbatim (status and body), marked as a replay.
 */
export class ReplayedResponse extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string | null,
  ) {
    super('replayed idempotent response');
  }

  send(reply: FastifyReply): FastifyReply {
    return reply
      .status(this.statusCode)
      .header(REPLAYED_HEADER, 'true')
      .type(this.statusCode >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json; charset=utf-8')
      .send(this.body ?? '');
  }
}

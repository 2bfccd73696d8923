import { PROBLEM_CONTENT_TYPE } from '@app/errors';
import type { FastifyReply } from 'fastify';

export const REPLAYED_HEADER = 'idempotent-replayed';

/** The stored response of an Idempotency-Key, sent verbatim (status and body) and marked as a replay. */
export class ReplayedResponse {
  constructor(
    readonly statusCode: number,
    readonly body: string | null,
  ) {}

  send(reply: FastifyReply): FastifyReply {
    return reply
      .status(this.statusCode)
      .header(REPLAYED_HEADER, 'true')
      .type(this.statusCode >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json; charset=utf-8')
      .send(this.body ?? '');
  }
}

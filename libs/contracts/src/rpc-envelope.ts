import type { ErrorPayload } from '@app/errors';

/**
 * What the gateway sends for every operation. `commandId` is unique per logical command (derived
 * from the Idempotency-Key when there is one), so a redelivered or retried command is applied once.
 */
export interface RpcRequest<T = unknown> {
  pattern: string;
  commandId: string;
  requestId: string;
  accountId: string;
  data: T;
  /** Set by the receiving transport when the broker delivers the command a second time. */
  redelivered?: boolean;
}

export type RpcReply<T = unknown> = { ok: true; data: T } | { ok: false; error: ErrorPayload };

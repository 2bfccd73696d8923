import type { Context } from '@opentelemetry/api';
import type { Static, TSchema } from '@sinclair/typebox';
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
  /**
   * Set by the receiving transport: when the caller stops waiting (a `Date.now()` time, from the
   * command's TTL), so database retries give up in time to answer 503 rather than be too late.
   */
  answerBy?: number;
  /**
   * Set by the receiving transport: the trace context of the command's span, the parent of the
   * spans and events the command causes (docs/operations.md "Tracing"). Never sent.
   */
  trace?: Context;
}

export type RpcReply<T = unknown> = { ok: true; data: T } | { ok: false; error: ErrorPayload };

/**
 * A reply on the wire is the JSON of an RpcReply. A successful one is always written as this
 * prefix, the data serialized with the operation's reply schema (json-serializer.ts), and `}`,
 * so a caller can take the data's bytes without parsing them: the gateway sends them as the
 * response body when it has nothing to change in it (okReplyData).
 */
const OK_REPLY_PREFIX = '{"ok":true,"data":';
const OK_REPLY_PREFIX_BYTES = Buffer.from(OK_REPLY_PREFIX);
const CLOSING_BRACE = 0x7d;

/**
 * Reply data already serialized, sent as it is instead of through the reply schema's serializer:
 * the JSON of the conversations the conversations service reads is written by Postgres (a test
 * holds that SQL to the schema). `T` is what it is the JSON of.
 */
export class JsonText<T = unknown> {
  declare readonly of?: T;
  constructor(readonly text: string) {}
}

/** The wire form of a successful reply whose data `serializedData` is (JSON text). */
export function encodeOkReply(serializedData: string): string {
  return `${OK_REPLY_PREFIX}${serializedData}}`;
}

/** The data of a successful reply written by encodeOkReply, as its JSON bytes (no copy); else undefined. */
export function okReplyData(content: Buffer): Buffer | undefined {
  const end = content.length - 1;
  if (end < OK_REPLY_PREFIX_BYTES.length || content[end] !== CLOSING_BRACE) return undefined;
  const prefix = content.subarray(0, OK_REPLY_PREFIX_BYTES.length);
  return prefix.equals(OK_REPLY_PREFIX_BYTES)
    ? content.subarray(OK_REPLY_PREFIX_BYTES.length, end)
    : undefined;
}

/**
 * One request/reply operation of a service: its pattern on the queue, the schema of its command
 * (validated by the service, whoever sent it) and of its reply.
 */
export interface RpcOperation<Command extends TSchema = TSchema, Reply extends TSchema = TSchema> {
  readonly pattern: string;
  readonly command: Command;
  readonly reply: Reply;
  /** Changes nothing, so the service may run it again when its database connection broke. */
  readonly readOnly?: boolean;
}

export const rpcOperation = <Command extends TSchema, Reply extends TSchema>(
  pattern: string,
  command: Command,
  reply: Reply,
): RpcOperation<Command, Reply> => ({ pattern, command, reply });

/** An operation that only reads. */
export const rpcQuery = <Command extends TSchema, Reply extends TSchema>(
  pattern: string,
  command: Command,
  reply: Reply,
): RpcOperation<Command, Reply> => ({ pattern, command, reply, readOnly: true });

export type CommandOf<Operation extends RpcOperation> = Static<Operation['command']>;
export type ReplyOf<Operation extends RpcOperation> = Static<Operation['reply']>;

/** What a handler of the operation receives: the request with its command validated. */
export type RpcCall<Operation extends RpcOperation> = RpcRequest<CommandOf<Operation>>;

/** Who sends a command and under which ids: the request's, and the command id when it is retry-safe. */
export interface RpcCallContext {
  accountId: string;
  requestId: string;
  commandId?: string;
  /** When the caller's answer is due (a performance.now() time); the call never outlasts it. Not sent. */
  deadline?: number;
  /** The trace context of the caller's span (its request's), the command's span's parent. Not sent. */
  trace?: Context;
}

import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  CloudEvent,
  CLOUDEVENTS_SOURCE,
  DomainEventData,
  DomainEventType,
  type RpcCallContext,
} from '@app/contracts';
import { execute, prepare } from '@app/database';
import { traceHeaders } from '@app/observability';
import { OutboxRelay } from './outbox.relay';

/** Statements prepared once per connection (see libs/database). */
const SQL = {
  insertEvent: prepare(
    `INSERT INTO conversations.outbox (event_id, account_id, conversation_id, type, envelope, sequence, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  ),
};

/**
 * What caused an event: the command's account, the API request (the `requestid` extension) and
 * the command's trace context (the `traceparent` extension).
 */
export type EventCause = Pick<RpcCallContext, 'accountId' | 'requestId' | 'trace'>;

/**
 * Records a domain event in the outbox inside the caller's transaction: the event exists if and
 * only if the change that caused it was committed. The relay publishes it afterwards. The event
 * takes the sequence the statement that changed its conversation assigned (`event_sequence`), and
 * its row's `created_at` is the CloudEvent's `time`, so the events API and the stream agree.
 */
@Injectable()
export class OutboxWriter {
  constructor(private readonly relay: OutboxRelay) {}

  /** Wakes the relay once `committed` (a transaction that may have appended events) has committed. */
  async relayOnCommit<T>(committed: Promise<T>): Promise<T> {
    const result = await committed;
    this.relay.wake();
    return result;
  }

  async append<T extends DomainEventType>(
    tx: EntityManager,
    cause: EventCause,
    conversation: { id: string; event_sequence: number },
    type: T,
    data: DomainEventData[T],
  ): Promise<CloudEvent<T>> {
    const envelope: CloudEvent<T> = {
      ...eventEnvelope(cause, conversation.id, type),
      sequence: conversation.event_sequence,
      data,
    };
    await execute(tx, SQL.insertEvent, [
      envelope.id,
      cause.accountId,
      conversation.id,
      type,
      JSON.stringify(envelope),
      envelope.sequence,
      envelope.time,
    ]);
    return envelope;
  }
}

/**
 * A new event's envelope without its sequence and data (for statements that add them themselves).
 * It carries the command's trace context as `traceparent` when tracing is on.
 */
export function eventEnvelope<T extends DomainEventType>(
  { accountId, requestId, trace }: EventCause,
  conversationId: string,
  type: T,
): Omit<CloudEvent<T>, 'sequence' | 'data'> {
  const traceparent = trace && traceHeaders(trace).traceparent;
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: CLOUDEVENTS_SOURCE,
    type,
    time: new Date().toISOString(),
    subject: conversationId,
    datacontenttype: 'application/json',
    accountid: accountId,
    ...(requestId && { requestid: requestId }),
    ...(traceparent && { traceparent }),
  };
}

import { Controller, Headers, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  EventId,
  EventRpc,
  ListEventsParams,
  PAGE_SIZE,
  parseWith,
  type Static,
  StreamEventsParams,
} from '@app/contracts';
import { type Dialect, parseEventType } from '@app/dialects';
import { DomainError } from '@app/errors';
import { RpcClient } from '@app/messaging';
import { ApiEndpoint } from '../http/endpoint';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { presentEvent } from './event-presenter';
import { EventEndpoints } from './events.endpoints';
import { STREAM_HEADERS } from './event-stream';
import { StreamHub } from './stream-hub';
import { StreamTokens } from '../auth/stream-tokens';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Where a stream resumes: the `Last-Event-ID` header (what EventSource sends when it reconnects)
 * or the `last_event_id` parameter (validated by the schema); both given must agree.
 */
function resumeAfter(header: string | undefined, parameter: string | undefined): string | undefined {
  if (header !== undefined && !UUID.test(header.trim())) {
    throw DomainError.validation([
      { field: 'Last-Event-ID', message: 'must be the id of an event (a UUID)' },
    ]);
  }
  const [fromHeader, fromQuery] = [header?.trim().toLowerCase(), parameter?.toLowerCase()];
  if (fromHeader !== undefined && fromQuery !== undefined && fromHeader !== fromQuery) {
    throw DomainError.validation([
      { field: 'last_event_id', message: 'differs from the Last-Event-ID header; send one of them' },
    ]);
  }
  return fromHeader ?? fromQuery;
}

/** The events API: pages and single events over RPC, and the live stream (StreamHub). */
@Controller()
export class EventsController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly hub: StreamHub,
    private readonly tokens: StreamTokens,
  ) {}

  @ApiEndpoint(EventEndpoints.list)
  async list(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Static<typeof ListEventsParams>,
  ) {
    const limit = query.limit ?? PAGE_SIZE.default;
    const page = await this.rpc.call(EventRpc.list, call, {
      ...query,
      type: query.type === undefined ? undefined : parseEventType(query.type),
      conversation_id: query.conversation_id?.toLowerCase(),
      limit,
    });
    return {
      data: page.data.map((event) => presentEvent(event, dialect)),
      pagination: { limit, next: page.next },
    };
  }

  @ApiEndpoint(EventEndpoints.stream)
  async stream(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Static<typeof StreamEventsParams>,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const after = resumeAfter(lastEventId, query.last_event_id);
    // HEAD asks what GET would start with: the headers, at once, without a stream or its slot.
    if (reply.request.method === 'HEAD') return reply.headers(STREAM_HEADERS).send();
    const { keyId, plan } = reply.request.principal!;
    await this.hub.open({ call, keyId, plan, dialect, lastEventId: after, reply });
  }

  @ApiEndpoint(EventEndpoints.createStreamToken)
  createStreamToken(@Req() request: FastifyRequest) {
    return this.tokens.issue(request.principal!);
  }

  @ApiEndpoint(EventEndpoints.get)
  async get(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') id: string) {
    const event = await this.rpc.call(EventRpc.get, call, {
      eventId: parseWith(EventId, id, 'id').toLowerCase(),
    });
    return presentEvent(event, dialect);
  }
}

import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { DELIVERY_STATUSES } from '@app/contracts';
import type { Dialect } from '@app/dialects';
import { DomainError } from '@app/errors';
import { ApiProblems } from '../http/api-problems.decorator';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook-bodies.dto';
import {
  DeliveryListResponse,
  DeliveryResponse,
  DeliveryWithAttemptsResponse,
  WebhookListResponse,
  WebhookResponse,
  WebhookWithSecretResponse,
} from './dto/webhook-responses.dto';
import { presentDelivery, presentWebhook } from './webhook-presenter';
import { parseDeliveriesQuery, parseEventNames, parsePage } from './webhook-query';
import { WebhooksClient } from './webhooks.client';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  required: false,
  description:
    'Retry-safe key (up to 255 printable ASCII characters); the first response is replayed for 24 h.',
};
const ID_PARAM = { name: 'id', format: 'uuid', description: 'Webhook (subscription) id.' };
const DELIVERY_PARAM = { name: 'deliveryId', format: 'uuid', description: 'Delivery id.' };
const BODY_PROBLEMS = [
  'validation_failed',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
] as const;
const POST_PROBLEMS = [...BODY_PROBLEMS, 'idempotency_key_reused', 'idempotency_key_in_use'] as const;

/** A malformed id names nothing: a 404 like an unknown or another account's id, never a 400. */
function id(value: string, what: 'Webhook' | 'Delivery'): string {
  if (!UUID.test(value)) throw new DomainError('not_found', `${what} ${value.slice(0, 64)} was not found.`);
  return value.toLowerCase();
}

@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksClient) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Subscribe an endpoint to events; the answer carries the signing secret, shown only now',
  })
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiCreatedResponse({ type: WebhookWithSecretResponse })
  @ApiProblems(...POST_PROBLEMS)
  async create(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Body() body: CreateWebhookDto) {
    const created = await this.webhooks.create(call, {
      url: body.url,
      events: parseEventNames(body.events),
      ...(body.dialect && { dialect: body.dialect }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.status && { status: body.status }),
    });
    return presentWebhook(created, dialect);
  }

  @Get()
  @ApiOperation({ summary: 'List webhooks, newest first' })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'Page size 1..100 (alias `had`).',
    schema: { type: 'integer', default: 20 },
  })
  @ApiQuery({
    name: 'offset',
    required: false,
    description: 'Rows to skip (aliases `mengimbangi`, `przesunięcie`).',
    schema: { type: 'integer', default: 0 },
  })
  @ApiOkResponse({ type: WebhookListResponse })
  @ApiProblems('validation_failed')
  async list(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Record<string, string | string[]>,
  ) {
    const page = await this.webhooks.list(call, parsePage(query));
    return { data: page.data.map((view) => presentWebhook(view, dialect)), pagination: page.pagination };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one webhook (without its secret)' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookResponse })
  @ApiProblems('not_found')
  async get(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') webhookId: string) {
    return presentWebhook(await this.webhooks.get(call, id(webhookId, 'Webhook')), dialect);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change url, events, dialect, description or status (enabled, disabled)' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookResponse })
  @ApiProblems(...BODY_PROBLEMS, 'not_found')
  async update(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') webhookId: string,
    @Body() body: UpdateWebhookDto,
  ) {
    const events = body.events && parseEventNames(body.events);
    const updated = await this.webhooks.update(call, {
      webhookId: id(webhookId, 'Webhook'),
      ...(body.url !== undefined && { url: body.url }),
      ...(events && { events }),
      ...(body.dialect && { dialect: body.dialect }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.status && { status: body.status }),
    });
    return presentWebhook(updated, dialect);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a webhook with its delivery log; nothing more is sent to it' })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems('not_found')
  async delete(@Call() call: CallContext, @Param('id') webhookId: string): Promise<void> {
    await this.webhooks.delete(call, id(webhookId, 'Webhook'));
  }

  @Post(':id/secret/rotate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replace the signing secret; for 24 h deliveries carry a second signature made with the old one',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiOkResponse({ type: WebhookWithSecretResponse })
  @ApiProblems(...POST_PROBLEMS, 'not_found')
  async rotateSecret(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') webhookId: string,
  ) {
    return presentWebhook(await this.webhooks.rotateSecret(call, id(webhookId, 'Webhook')), dialect);
  }

  @Post(':id/test')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a `webhook.test` event to this webhook alone; returns its delivery' })
  @ApiParam(ID_PARAM)
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiAcceptedResponse({ type: DeliveryResponse })
  @ApiProblems(...POST_PROBLEMS, 'not_found', 'webhook_disabled')
  async test(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') webhookId: string) {
    return presentDelivery(await this.webhooks.test(call, id(webhookId, 'Webhook')), dialect);
  }

  @Get(':id/deliveries')
  @ApiOperation({ summary: "A webhook's deliveries, newest first" })
  @ApiParam(ID_PARAM)
  @ApiQuery({ name: 'status', required: false, enum: DELIVERY_STATUSES })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'Page size 1..100 (alias `had`).',
    schema: { type: 'integer', default: 20 },
  })
  @ApiQuery({
    name: 'offset',
    required: false,
    description: 'Rows to skip (aliases `mengimbangi`, `przesunięcie`).',
    schema: { type: 'integer', default: 0 },
  })
  @ApiOkResponse({ type: DeliveryListResponse })
  @ApiProblems('validation_failed', 'not_found')
  async listDeliveries(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') webhookId: string,
    @Query() query: Record<string, string | string[]>,
  ) {
    const webhook = id(webhookId, 'Webhook');
    const page = await this.webhooks.listDeliveries(call, {
      webhookId: webhook,
      ...parseDeliveriesQuery(query),
    });
    return { data: page.data.map((view) => presentDelivery(view, dialect)), pagination: page.pagination };
  }

  @Get(':id/deliveries/:deliveryId')
  @ApiOperation({ summary: 'One delivery with every attempt (status code, duration, response body, error)' })
  @ApiParam(ID_PARAM)
  @ApiParam(DELIVERY_PARAM)
  @ApiOkResponse({ type: DeliveryWithAttemptsResponse })
  @ApiProblems('not_found')
  async getDelivery(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') webhookId: string,
    @Param('deliveryId') deliveryId: string,
  ) {
    const ref = { webhookId: id(webhookId, 'Webhook'), deliveryId: id(deliveryId, 'Delivery') };
    return presentDelivery(await this.webhooks.getDelivery(call, ref), dialect);
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a finished delivery once more, now, with the same webhook-id' })
  @ApiParam(ID_PARAM)
  @ApiParam(DELIVERY_PARAM)
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiAcceptedResponse({ type: DeliveryResponse })
  @ApiProblems(...POST_PROBLEMS, 'not_found', 'webhook_disabled', 'delivery_pending')
  async retryDelivery(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') webhookId: string,
    @Param('deliveryId') deliveryId: string,
  ) {
    const ref = { webhookId: id(webhookId, 'Webhook'), deliveryId: id(deliveryId, 'Delivery') };
    return presentDelivery(await this.webhooks.retryDelivery(call, ref), dialect);
  }
}

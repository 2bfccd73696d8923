import { ApiProperty } from '@nestjs/swagger';
import { DELIVERY_STATUSES, SUBSCRIPTION_STATUSES, WEBHOOK_TEST_EVENT } from '@app/contracts';
import { DIALECTS } from '@app/dialects';
import { ALL_EVENT_SPELLINGS } from './webhook-bodies.dto';

const WEBHOOK_ID = { format: 'uuid', example: '3f2a9c1e-7b6d-4e5f-8a9b-0c1d2e3f4a5b' };
const TIME = { format: 'date-time', example: '2026-03-02T09:15:27.412Z' };
const NULLABLE_TIME = { type: String, ...TIME, nullable: true };

export class WebhookResponse {
  @ApiProperty(WEBHOOK_ID) id: string;
  @ApiProperty({ example: 'https://example.com/webhooks/conversations' }) url: string;
  @ApiProperty({
    enum: ALL_EVENT_SPELLINGS,
    isArray: true,
    description: 'Subscribed event names in the output dialect, or `*`.',
    example: ['conversation.started', 'message.received'],
  })
  events: string[];
  @ApiProperty({ enum: DIALECTS, example: 'en' }) dialect: string;
  @ApiProperty({ type: String, nullable: true, example: 'CRM sync' }) description: string | null;
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES, example: 'enabled' }) status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why it is disabled: `disabled_by_user`, `endpoint_gone` (it answered 410), `failing` (every attempt failed for 5 days).',
    example: null,
  })
  disabled_reason: string | null;
  @ApiProperty({ ...NULLABLE_TIME, description: 'Start of the current failure streak.', example: null })
  failing_since: string | null;
  @ApiProperty(TIME) created_at: string;
  @ApiProperty(TIME) updated_at: string;
}

export class WebhookWithSecretResponse extends WebhookResponse {
  @ApiProperty({
    description: 'Signing secret (`whsec_` + base64). Shown only here: on create and on rotation.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;
}

export class PagePagination {
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({ example: 0 }) offset: number;
  @ApiProperty({ example: 3 }) total: number;
}

export class WebhookListResponse {
  @ApiProperty({ type: [WebhookResponse] }) data: WebhookResponse[];
  @ApiProperty({ type: PagePagination }) pagination: PagePagination;
}

export class DeliveryAttemptResponse {
  @ApiProperty({ example: 1 }) attempt: number;
  @ApiProperty(TIME) started_at: string;
  @ApiProperty({ example: 84 }) duration_ms: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Null when no response came.', example: 503 })
  status_code: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'First 1 KiB of the response body.',
    example: 'Service Unavailable',
  })
  response_body: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'connection refused' }) error: string | null;
}

export class DeliveryResponse {
  @ApiProperty({ format: 'uuid', example: '9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b' }) id: string;
  @ApiProperty(WEBHOOK_ID) webhook_id: string;
  @ApiProperty({
    format: 'uuid',
    description: 'Also the `webhook-id` header of every attempt.',
    example: '67869b47-9c87-4c5a-9920-81d251ca95f4',
  })
  event_id: string;
  @ApiProperty({
    enum: [...ALL_EVENT_SPELLINGS.filter((e) => e !== '*'), WEBHOOK_TEST_EVENT],
    description: 'In the output dialect.',
    example: 'conversation.started',
  })
  event_type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'pending' }) status: string;
  @ApiProperty({ type: 'integer', example: 1 }) attempt_count: number;
  @ApiProperty(NULLABLE_TIME) next_attempt_at: string | null;
  @ApiProperty(NULLABLE_TIME) last_attempt_at: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 503 }) last_status_code: number | null;
  @ApiProperty(TIME) created_at: string;
  @ApiProperty({ ...NULLABLE_TIME, example: null }) completed_at: string | null;
}

export class DeliveryWithAttemptsResponse extends DeliveryResponse {
  @ApiProperty({ type: [DeliveryAttemptResponse], description: 'Every attempt, oldest first.' })
  attempts: DeliveryAttemptResponse[];
}

export class DeliveryListResponse {
  @ApiProperty({ type: [DeliveryResponse] }) data: DeliveryResponse[];
  @ApiProperty({ type: PagePagination }) pagination: PagePagination;
}

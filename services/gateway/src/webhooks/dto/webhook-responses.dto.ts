import { ApiProperty } from '@nestjs/swagger';
import { DELIVERY_STATUSES, SUBSCRIPTION_STATUSES, WEBHOOK_TEST_EVENT } from '@app/contracts';
import { DIALECTS } from '@app/dialects';
import { ALL_EVENT_SPELLINGS } from './webhook-bodies.dto';

export class WebhookResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'https://example.com/webhooks/conversations' }) url: string;
  @ApiProperty({
    enum: ALL_EVENT_SPELLINGS,
    isArray: true,
    description: 'Subscribed event names in the output dialect, or `*`.',
  })
  events: string[];
  @ApiProperty({ enum: DIALECTS }) dialect: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES }) status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it is disabled: `disabled_by_user`, `endpoint_gone` (it answered 410), `failing` (every attempt failed for 5 days).',
  })
  disabled_reason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Start of the current failure streak.' })
  failing_since: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
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
  @ApiProperty({ format: 'date-time' }) started_at: string;
  @ApiProperty({ example: 84 }) duration_ms: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Null when no response came.' }) status_code: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'First 1 KiB of the response body.' })
  response_body: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'connection refused' }) error: string | null;
}

export class DeliveryResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) webhook_id: string;
  @ApiProperty({ format: 'uuid', description: 'Also the `webhook-id` header of every attempt.' }) event_id: string;
  @ApiProperty({
    enum: [...ALL_EVENT_SPELLINGS.filter((e) => e !== '*'), WEBHOOK_TEST_EVENT],
    description: 'In the output dialect.',
  })
  event_type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: string;
  @ApiProperty() attempt_count: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_attempt_at: string | null;
  @ApiProperty({ type: Number, nullable: true }) last_status_code: number | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completed_at: string | null;
}

export class DeliveryWithAttemptsResponse extends DeliveryResponse {
  @ApiProperty({ type: [DeliveryAttemptResponse], description: 'Every attempt, oldest first.' })
  attempts: DeliveryAttemptResponse[];
}

export class DeliveryListResponse {
  @ApiProperty({ type: [DeliveryResponse] }) data: DeliveryResponse[];
  @ApiProperty({ type: PagePagination }) pagination: PagePagination;
}

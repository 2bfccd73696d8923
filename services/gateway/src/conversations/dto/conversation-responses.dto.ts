import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MESSAGE_SENDERS } from '@app/contracts';
import { ALL_STATUS_SPELLINGS } from '@app/dialects';
import { ERROR_CATALOGUE } from '@app/errors';

const STATUS_DOC = {
  enum: ALL_STATUS_SPELLINGS,
  description: 'Rendered in the output dialect.',
  example: 'active',
};
const CONVERSATION_ID = { format: 'uuid', example: '0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b' };
const TIME = { format: 'date-time', example: '2026-03-02T09:15:27.412Z' };
const NULLABLE_TIME = { type: String, ...TIME, nullable: true };

export class VisitorResponse {
  @ApiProperty({ type: String, nullable: true, example: 'Ada Lovelace' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'ada@example.com' }) email: string | null;
  @ApiProperty({ type: String, nullable: true, example: '+44 20 7946 0958' }) phone: string | null;
}

export class MessageResponse {
  @ApiProperty({ format: 'uuid', example: '5d3b1f0e-9a47-4c2e-8f61-2b7d9c0a4e15' }) id: string;
  @ApiProperty(CONVERSATION_ID) conversation_id: string;
  @ApiProperty({ enum: MESSAGE_SENDERS, example: 'visitor' }) sender: string;
  @ApiProperty({ example: 'Where is my parcel?' }) content: string;
  @ApiProperty(TIME) created_at: string;
}

export class ConversationResponse {
  @ApiProperty(CONVERSATION_ID) id: string;
  @ApiProperty(STATUS_DOC) status: string;
  @ApiProperty({ type: VisitorResponse, nullable: true }) visitor: VisitorResponse | null;
  @ApiProperty({ type: String, nullable: true, example: 'Order 1001' }) subject: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { order: '1001', channel: 'web' } })
  metadata: Record<string, unknown>;
  @ApiProperty({ type: 'integer', example: 2 }) message_count: number;
  @ApiProperty(NULLABLE_TIME) last_message_at: string | null;
  @ApiProperty(TIME) created_at: string;
  @ApiProperty(TIME) updated_at: string;
  @ApiProperty({ ...NULLABLE_TIME, example: null }) closed_at: string | null;
}

export class ConversationWithMessagesResponse extends ConversationResponse {
  @ApiProperty({ type: [MessageResponse], description: 'Every message, oldest first.' })
  messages: MessageResponse[];
}

export class PaginationResponse {
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({ example: 0 }) offset: number;
  @ApiProperty({ description: 'Conversations matching the filter as of the snapshot.', example: 57 })
  total: number;
  @ApiProperty({
    description:
      'Opaque token of the moment the first page was read. Pass it back as `snapshot` (as `next` does) to page through a list that does not shift while others create conversations.',
    example: 'NzY4Ojc3MDo3Njk',
  })
  snapshot: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Path of the next page (same snapshot), or null on the last page.',
    example: '/v1/conversations?limit=20&offset=20&snapshot=NzY4Ojc3MDo3Njk',
  })
  next: string | null;
}

export class ConversationListResponse {
  @ApiProperty({ type: [ConversationResponse] }) data: ConversationResponse[];
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
}

export class LeadResponse {
  @ApiProperty({ format: 'uuid', example: 'c7a1d9e2-3b4f-4e5a-9c6d-7e8f9a0b1c2d' }) id: string;
  @ApiProperty(CONVERSATION_ID) conversation_id: string;
  @ApiProperty({ type: String, nullable: true, example: 'Ada Lovelace' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'ada@example.com' }) email: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) phone: string | null;
  @ApiProperty(TIME) created_at: string;
}

export class FieldErrorResponse {
  @ApiProperty({ example: 'limit' }) field: string;
  @ApiProperty({ example: 'must be an integer from 1 to 100' }) message: string;
}

export class ProblemResponse {
  @ApiProperty({ example: 'https://docs.conversations.example/problems/validation-failed' }) type: string;
  @ApiProperty({ example: 'Request validation failed' }) title: string;
  @ApiProperty({ type: 'integer', example: 400 }) status: number;
  @ApiProperty({ example: 'limit: must be an integer from 1 to 100' }) detail: string;
  @ApiProperty({
    enum: Object.keys(ERROR_CATALOGUE),
    example: 'validation_failed',
    description: 'Stable snake_case error code.',
  })
  code: string;
  @ApiProperty({ example: '8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10' }) request_id: string;
  @ApiPropertyOptional({ example: '/v1/conversations' }) instance?: string;
  @ApiPropertyOptional({ type: [FieldErrorResponse] }) errors?: FieldErrorResponse[];
}

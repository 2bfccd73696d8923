import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MESSAGE_SENDERS } from '@app/contracts';
import { ALL_STATUS_SPELLINGS } from '@app/dialects';

const STATUS_DOC = { enum: ALL_STATUS_SPELLINGS, description: 'Rendered in the output dialect.', example: 'active' };

export class VisitorResponse {
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
}

export class MessageResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) conversation_id: string;
  @ApiProperty({ enum: MESSAGE_SENDERS }) sender: string;
  @ApiProperty() content: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class ConversationResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty(STATUS_DOC) status: string;
  @ApiProperty({ type: VisitorResponse, nullable: true }) visitor: VisitorResponse | null;
  @ApiProperty({ type: String, nullable: true }) subject: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
  @ApiProperty() message_count: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_message_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) closed_at: string | null;
}

export class ConversationWithMessagesResponse extends ConversationResponse {
  @ApiProperty({ type: [MessageResponse], description: 'Every message, oldest first.' }) messages: MessageResponse[];
}

export class PaginationResponse {
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({ example: 0 }) offset: number;
  @ApiProperty({ description: 'Conversations matching the filter as of the snapshot.', example: 57 }) total: number;
  @ApiProperty({
    description:
      'Opaque token of the moment the first page was read. Pass it back as `snapshot` (as `next` does) to page through a list that does not shift while others create conversations.',
    example: 'NzY4Ojc3MDo3Njk',
  })
  snapshot: string;
  @ApiProperty({ type: String, nullable: true, description: 'Path of the next page (same snapshot), or null on the last page.' })
  next: string | null;
}

export class ConversationListResponse {
  @ApiProperty({ type: [ConversationResponse] }) data: ConversationResponse[];
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
}

export class LeadResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) conversation_id: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class FieldErrorResponse {
  @ApiProperty({ example: 'limit' }) field: string;
  @ApiProperty({ example: 'must be an integer from 1 to 100' }) message: string;
}

export class ProblemResponse {
  @ApiProperty({ example: 'https://docs.conversations.example/problems/validation-failed' }) type: string;
  @ApiProperty({ example: 'Request validation failed' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty({ example: 'limit: must be an integer from 1 to 100' }) detail: string;
  @ApiProperty({ example: 'validation_failed', description: 'Stable snake_case error code.' }) code: string;
  @ApiProperty({ example: '8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10' }) request_id: string;
  @ApiPropertyOptional({ example: '/v1/conversations' }) instance?: string;
  @ApiPropertyOptional({ type: [FieldErrorResponse] }) errors?: FieldErrorResponse[];
}

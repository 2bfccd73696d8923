import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MESSAGE_CONTENT_MAX, MESSAGE_SENDERS, MessageSender } from '@app/contracts';
import { ALL_STATUS_SPELLINGS } from '@app/dialects';
import { ContactEmail, MetadataObject, StorableText } from '../../http/safe-text';

export class VisitorDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'Ada Lovelace' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @StorableText()
  name?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'email',
    maxLength: 320,
    example: 'ada@example.com',
  })
  @IsOptional()
  @ContactEmail()
  @MaxLength(320)
  email?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 50, example: '+44 20 7946 0958' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  @StorableText()
  phone?: string | null;
}

export class SendMessageDto {
  @ApiProperty({ minLength: 1, maxLength: MESSAGE_CONTENT_MAX, example: 'Hello! How can I help you today?' })
  @IsString()
  @Length(1, MESSAGE_CONTENT_MAX)
  @StorableText()
  content: string;

  @ApiProperty({ enum: MESSAGE_SENDERS, example: 'agent' })
  @IsIn(MESSAGE_SENDERS)
  sender: MessageSender;
}

export class CreateConversationDto {
  @ApiPropertyOptional({ type: VisitorDto, nullable: true })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => VisitorDto)
  visitor?: VisitorDto | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500, example: 'Question about my order' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  @StorableText()
  subject?: string | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { order_id: 'A-1001' } })
  @IsOptional()
  @MetadataObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({
    description:
      'Initial status, in any dialect: active (aktif, aktywne) or pending (belum selesai, w toku).',
    example: 'active',
    default: 'active',
  })
  @ValidateIf((body: CreateConversationDto) => body.status !== undefined)
  @IsString()
  @MaxLength(50)
  status?: string;

  @ApiPropertyOptional({
    type: SendMessageDto,
    description: 'A first message; a visitor one emits message.received.',
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => SendMessageDto)
  message?: SendMessageDto;
}

export class ChangeStatusDto {
  @ApiProperty({
    description: 'Target status in any dialect.',
    enum: ALL_STATUS_SPELLINGS,
    example: 'closed',
  })
  @IsString()
  @MaxLength(50)
  status: string;
}

export class CaptureLeadDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'Ada Lovelace' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @StorableText()
  name?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'email',
    description: 'Email or phone is required.',
    example: 'ada@example.com',
  })
  @ValidateIf((lead: CaptureLeadDto) => lead.email != null || lead.phone == null)
  @ContactEmail({ message: 'email must be a valid email address (email or phone is required)' })
  @MaxLength(320)
  email?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 50, example: '+44 20 7946 0958' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  @StorableText()
  phone?: string | null;
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ALL_EVENTS, SUBSCRIPTION_STATUSES } from '@app/contracts';
import { Dialect, DIALECTS, EVENT_NAMES } from '@app/dialects';
import { StorableText } from '../../http/safe-text';

/** Every accepted event name: `*` and each public event in each dialect. */
export const ALL_EVENT_SPELLINGS: string[] = [
  ALL_EVENTS,
  ...Object.values(EVENT_NAMES)
    .flatMap((names) => DIALECTS.map((dialect) => names[dialect]))
    .filter((name, index, all) => all.indexOf(name) === index),
];

const URL_DOC = {
  description:
    'Where deliveries are POSTed: https (http only where private targets are allowed). Hosts resolving to loopback, private, link-local, carrier-grade NAT or metadata addresses are refused.',
  maxLength: 2048,
  example: 'https://example.com/webhooks/conversations',
};
const EVENTS_DOC = {
  description: 'Event names in any dialect, or `*` for all.',
  enum: ALL_EVENT_SPELLINGS,
  isArray: true,
  minItems: 1,
  maxItems: 20,
  example: ['conversation.started', 'mesej.diterima'],
};
const DIALECT_DOC = {
  enum: DIALECTS,
  description: 'How `type` (and conversation statuses) are spelled in what the subscriber receives.',
  default: 'en',
};
const DESCRIPTION_DOC = { type: String, nullable: true, maxLength: 500, example: 'CRM sync' };
const STATUS_DOC = { enum: SUBSCRIPTION_STATUSES, default: 'enabled' };

export class CreateWebhookDto {
  @ApiProperty(URL_DOC)
  @IsString()
  @MaxLength(2048)
  @StorableText()
  url: string;

  @ApiProperty(EVENTS_DOC)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  events: string[];

  @ApiPropertyOptional(DIALECT_DOC)
  @IsOptional()
  @IsIn(DIALECTS)
  dialect?: Dialect;

  @ApiPropertyOptional(DESCRIPTION_DOC)
  @IsOptional()
  @IsString()
  @MaxLength(500)
  @StorableText()
  description?: string | null;

  @ApiPropertyOptional(STATUS_DOC)
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES)
  status?: 'enabled' | 'disabled';
}

export class UpdateWebhookDto {
  @ApiPropertyOptional(URL_DOC)
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @StorableText()
  url?: string;

  @ApiPropertyOptional(EVENTS_DOC)
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  events?: string[];

  @ApiPropertyOptional(DIALECT_DOC)
  @IsOptional()
  @IsIn(DIALECTS)
  dialect?: Dialect;

  @ApiPropertyOptional(DESCRIPTION_DOC)
  @IsOptional()
  @IsString()
  @MaxLength(500)
  @StorableText()
  description?: string | null;

  @ApiPropertyOptional({
    ...STATUS_DOC,
    description:
      'Disable to pause deliveries (pending ones wait); enable to resume and clear a failure streak.',
  })
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES)
  status?: 'enabled' | 'disabled';
}

import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { CloudEvent } from '@app/contracts';

@Entity({ schema: 'conversations', name: 'outbox' })
export class OutboxEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ type: 'uuid', name: 'event_id' }) eventId: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId: string;
  @Column({ type: 'uuid', name: 'conversation_id' }) conversationId: string;
  @Column({ type: 'text' }) type: string;
  @Column({ type: 'jsonb' }) envelope: CloudEvent;
  @Column({ type: 'integer' }) sequence: number;
  @Column({ type: 'bigint', name: 'published_seq', nullable: true }) publishedSeq: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'published_at', precision: 3, nullable: true })
  publishedAt: Date | null;
}

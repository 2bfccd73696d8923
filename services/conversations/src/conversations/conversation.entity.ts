import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ConversationStatus } from '@app/dialects';

@Entity({ schema: 'conversations', name: 'conversations' })
export class ConversationEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId: string;
  @Column({ type: 'text' }) status: ConversationStatus;
  @Column({ type: 'text', name: 'visitor_name', nullable: true }) visitorName: string | null;
  @Column({ type: 'text', name: 'visitor_email', nullable: true }) visitorEmail: string | null;
  @Column({ type: 'text', name: 'visitor_phone', nullable: true }) visitorPhone: string | null;
  @Column({ type: 'text', nullable: true }) subject: string | null;
  @Column({ type: 'jsonb' }) metadata: Record<string, unknown>;
  @Column({ type: 'integer', name: 'message_count' }) messageCount: number;
  @Column({ type: 'timestamptz', name: 'last_message_at', precision: 3, nullable: true })
  lastMessageAt: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', precision: 3 }) updatedAt: Date;
  @Column({ type: 'timestamptz', name: 'closed_at', precision: 3, nullable: true }) closedAt: Date | null;
  /** The `sequence` of its latest event (see the EventSequencesAndStore migration). */
  @Column({ type: 'integer', name: 'event_sequence' }) eventSequence: number;
}

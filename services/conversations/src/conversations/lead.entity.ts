import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Every lead capture, kept as history; the latest contact details also live on the conversation. */
@Entity({ schema: 'conversations', name: 'leads' })
export class LeadEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'conversation_id' }) conversationId: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId: string;
  @Column({ type: 'text', nullable: true }) name: string | null;
  @Column({ type: 'text', nullable: true }) email: string | null;
  @Column({ type: 'text', nullable: true }) phone: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
}

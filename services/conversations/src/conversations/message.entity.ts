import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { MessageSender } from '@app/contracts';

@Entity({ schema: 'conversations', name: 'messages' })
export class MessageEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'conversation_id' }) conversationId: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId: string;
  /** 1-based order within the conversation; messages are read oldest first by it. */
  @Column({ type: 'integer' }) position: number;
  @Column({ type: 'text' }) sender: MessageSender;
  @Column({ type: 'text' }) content: string;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
}

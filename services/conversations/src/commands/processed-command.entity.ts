import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'conversations', name: 'processed_commands' })
export class ProcessedCommandEntity {
  @PrimaryColumn({ type: 'text', name: 'command_id' }) commandId: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId: string;
  @Column({ type: 'text' }) pattern: string;
  @Column({ type: 'text', name: 'payload_hash', nullable: true }) payloadHash: string | null;
  @Column({ type: 'jsonb', nullable: true }) response: unknown;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'conversations', name: 'status_counts' })
export class StatusCountEntity {
  @PrimaryColumn({ type: 'uuid', name: 'account_id' }) accountId: string;
  @PrimaryColumn('text') status: string;
  @Column({ type: 'bigint' }) count: string;
}

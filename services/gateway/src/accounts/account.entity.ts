import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Plan } from '@app/dialects';

@Entity({ schema: 'gateway', name: 'accounts' })
export class AccountEntity {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text' }) plan: Plan;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'gateway', name: 'idempotency_keys' })
export class IdempotencyKeyEntity {
  @PrimaryColumn({ type: 'uuid', name: 'account_id' }) accountId: string;
  @PrimaryColumn({ type: 'text' }) key: string;
  @Column({ type: 'text' }) method: string;
  @Column({ type: 'text' }) path: string;
  @Column({ type: 'text', name: 'body_hash' }) bodyHash: string;
  @Column({ type: 'integer', name: 'status_code', nullable: true }) statusCode: number | null;
  @Column({ type: 'text', name: 'response_body', nullable: true }) responseBody: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'completed_at', precision: 3, nullable: true })
  completedAt: Date | null;
  @Column({ type: 'uuid', name: 'claim_token', nullable: true }) claimToken: string | null;
  @Column({ type: 'timestamptz', name: 'locked_until', precision: 3, nullable: true })
  lockedUntil: Date | null;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'gateway', name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId: string;
  @Column({ type: 'bytea', name: 'secret_hash' }) secretHash: Buffer;
  @Column({ type: 'timestamptz', name: 'created_at', precision: 3 }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'revoked_at', precision: 3, nullable: true }) revokedAt: Date | null;
}

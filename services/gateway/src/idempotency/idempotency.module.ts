import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import type { GatewayConfig } from '@app/config';
import { GATEWAY_CONFIG, GATEWAY_LOGGER } from '../core/tokens';
import { IdempotencyHooks } from './idempotency-hooks';
import { IdempotencyRetentionJob } from './idempotency-retention.job';
import { IdempotencyRepository } from './idempotency.repository';

/**
 * An unfinished Idempotency-Key claim is taken over this long after the RPC timeout: its request
 * can no longer be waiting for a reply by then.
 */
const IDEMPOTENCY_LEASE_MARGIN_MS = 1000;

/** Idempotency-Key: the stored keys, the Fastify hooks that claim and replay them, their clean-up. */
@Module({
  providers: [
    {
      provide: IdempotencyRepository,
      inject: [getDataSourceToken(), GATEWAY_CONFIG],
      useFactory: (db: DataSource, config: GatewayConfig) =>
        new IdempotencyRepository(
          db,
          config.IDEMPOTENCY_TTL_HOURS,
          config.RPC_TIMEOUT_MS + IDEMPOTENCY_LEASE_MARGIN_MS,
        ),
    },
    {
      provide: IdempotencyHooks,
      inject: [IdempotencyRepository, GATEWAY_LOGGER],
      useFactory: (keys: IdempotencyRepository, logger: Logger) => new IdempotencyHooks(keys, logger),
    },
    {
      provide: IdempotencyRetentionJob,
      inject: [IdempotencyRepository, GATEWAY_LOGGER],
      useFactory: (keys: IdempotencyRepository, logger: Logger) => new IdempotencyRetentionJob(keys, logger),
    },
  ],
  exports: [IdempotencyHooks, IdempotencyRepository],
})
export class IdempotencyModule {}

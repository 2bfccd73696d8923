import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { HealthIndicatorFunction, TerminusModule } from '@nestjs/terminus';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { PinoNestLogger } from '../pino-nest-logger';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { READINESS_CHECKS } from './readiness-checks';

/** The controllers of the ops endpoints; a host module also imports OPS_TERMINUS and provides Registry and READINESS_CHECKS. */
export const OPS_CONTROLLERS = [HealthController, MetricsController];

/** Terminus, logging a failed readiness check as one JSON line (through the app's logger) rather than a coloured block. */
export const OPS_TERMINUS = TerminusModule.forRoot({ errorLogStyle: 'json' });

export interface OpsServerOptions {
  /** OPS_PORT 0 picks a free port. */
  config: { OPS_HOST: string; OPS_PORT: number };
  registry: Registry;
  readiness: HealthIndicatorFunction[];
  logger: Logger;
}

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

@Module({})
class OpsModule {
  static register(registry: Registry, readiness: HealthIndicatorFunction[]): DynamicModule {
    return {
      module: OpsModule,
      imports: [OPS_TERMINUS],
      controllers: OPS_CONTROLLERS,
      providers: [
        { provide: Registry, useValue: registry },
        { provide: READINESS_CHECKS, useValue: readiness },
      ],
    };
  }
}

/**
 * A small HTTP server for a service that has no HTTP API of its own (conversations, webhooks):
 * GET /health/live, /health/ready and /metrics, nothing else.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const app = await NestFactory.create<NestFastifyApplication>(
    OpsModule.register(options.registry, options.readiness),
    new FastifyAdapter({ logger: false }),
    { logger: new PinoNestLogger(options.logger), abortOnError: false },
  );
  await app.listen({ port: options.config.OPS_PORT, host: options.config.OPS_HOST });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : options.config.OPS_PORT;
  const url = `http://127.0.0.1:${port}`;
  options.logger.info({ url }, 'ops server listening');
  return { url, close: () => app.close() };
}

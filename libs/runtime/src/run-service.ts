import type { Logger } from 'pino';
import { ConfigError } from '@app/config';
import { createLogger, stopTracing } from '@app/observability';
import { Dependency, findUnreachable } from './dependency-check';
import { setHeapGrowingPercent } from './heap-growth';
import { explainStartupFailure } from './startup-problems';

export interface ServiceHandle {
  close(): Promise<void>;
}

interface ServiceConfig {
  LOG_LEVEL: string;
  HEAP_GROWING_PERCENT: number;
  /** The ports a service listens on and its database, named when a start fails on them. */
  PORT?: number;
  OPS_PORT?: number;
  DATABASE_URL?: string;
}

interface ServiceDefinition<C extends ServiceConfig> {
  name: string;
  loadConfig: () => C;
  dependencies: (config: C) => Dependency[];
  start: (config: C, logger: Logger) => Promise<ServiceHandle>;
  /** Longest a graceful stop may take before the process exits anyway. */
  shutdownTimeoutMs?: number;
}

/**
 * The `main` of every service: validated config, the heap's growth set, fail-fast dependency check naming what is down
 * and how to start it, then graceful shutdown on SIGTERM/SIGINT within a bounded time.
 */
export async function runService<C extends ServiceConfig>(definition: ServiceDefinition<C>): Promise<void> {
  let config: C;
  try {
    config = definition.loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${definition.name}: ${error.message}\n`);
    process.exit(1);
  }
  setHeapGrowingPercent(config.HEAP_GROWING_PERCENT);
  const logger = createLogger(definition.name, config.LOG_LEVEL);
  const unreachable = await findUnreachable(definition.dependencies(config));
  if (unreachable.length > 0) {
    for (const problem of unreachable) process.stderr.write(`${definition.name}: ${problem}\n`);
    process.exit(1);
  }
  let handle: ServiceHandle;
  try {
    handle = await definition.start(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'start-up failed');
    const ports = Object.fromEntries(
      (['PORT', 'OPS_PORT'] as const).flatMap((name) =>
        config[name] === undefined ? [] : [[name, config[name]]],
      ),
    );
    const hint = explainStartupFailure(error, { ports, databaseUrl: config.DATABASE_URL });
    process.stderr.write(
      `${definition.name}: start-up failed: ${(error as Error).message}\n` +
        (hint ? `${definition.name}: ${hint}\n` : ''),
    );
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, definition.shutdownTimeoutMs ?? 25_000);
    // Spans still buffered are exported before the exit (stopTracing is a no-op without tracing).
    handle
      .close()
      .then(() => stopTracing())
      .then(
        () => {
          clearTimeout(deadline);
          logger.flush();
          process.exit(0);
        },
        (error) => {
          logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

export * from './logger';
export * from './pino-nest-logger';
export * from './ops/metrics-registry';
export * from './ops/readiness-checks';
export * from './ops/ops-server';

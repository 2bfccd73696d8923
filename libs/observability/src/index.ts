export * from './request-context';
export * from './logger';
export * from './run-service';
export * from './pino-nest-logger';

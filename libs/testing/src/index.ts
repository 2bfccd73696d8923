export * from './test-run';
export * from './eventually';
export * from './api-client';
export * from './test-stack';
export * from './event-tap';
export * from './service-process';
export * from './problem-assertions';
export * from './webhook-receiver';

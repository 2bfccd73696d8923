export * from './amqp-connection';
export * from './rpc-queue';
export * from './rpc-server';
export * from './rpc-client';
export * from './event-publisher';
export * from './rpc-metrics';
export * from './pass-through-rpc.filter';
export * from './rpc-service';

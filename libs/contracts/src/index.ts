export * from './broker-topology';
export * from './conversation-views';
export * from './conversation-commands';
export * from './rpc-envelope';
export * from './domain-events';
export * from './list-snapshot';
export * from './storable-text';
export * from './webhooks';

export * from './run-service';
export * from './dependency-check';
export * from './startup-problems';
export * from './rpc-service';
export * from './periodic-task';
export * from './coalescer';
export * from './batched-calls';
export * from './heap-growth';

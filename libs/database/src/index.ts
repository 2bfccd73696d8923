export * from './prepare-database';
export * from './data-source-options';
export * from './pg-listener';
export * from './prepared-statement';
export * from './command-log';
export * from './database-errors';
export * from './failover-retry';

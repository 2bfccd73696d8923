export * from './load-config';
export * from './config-schemas';
export * from './database-bounds';

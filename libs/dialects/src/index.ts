export * from './dialect-tables';
export * from './dialect-translation';

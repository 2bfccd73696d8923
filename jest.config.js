/** One Jest run for everything: unit specs beside the code, integration and e2e tests in each service's test/. */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/services', '<rootDir>/libs', '<rootDir>/scripts', '<rootDir>/bench', '<rootDir>/sdk'],
  testRegex: '.*\\.(spec|e2e-spec|int-spec)\\.ts$',
  transform: {
    '^.+\\.ts$': swc,
    '^.+/node_modules/@apidevtools/json-schema-ref-parser/.+\\.js$': swc,
  },
  // json-schema-ref-parser (under swagger-parser, for the OpenAPI tests) ships only ES modules;
  // Node loads it with require(), Jest's module system does not, so it is compiled like our code.
  transformIgnorePatterns: ['/node_modules/(?!@apidevtools/json-schema-ref-parser/)'],
  moduleNameMapper: { '^@app/([a-z-]+)$': '<rootDir>/libs/$1/src' },
  // Registers the services and CLI that libs/testing's TestStack runs (the lib imports no service).
  setupFiles: ['<rootDir>/scripts/test-services.ts'],
  globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 1,
};

/**
 * The compose suite (`npm run test:compose`, through scripts/compose/run.sh): the stack in Docker,
 * nothing of the host's Postgres, Redis or RabbitMQ, so no per-run database or vhost either.
 * Never part of `npm test`: the main config's testRegex does not match `*.compose-spec.ts`.
 */
const base = require('../../jest.config');

module.exports = {
  ...base,
  rootDir: '../..',
  roots: ['<rootDir>/scripts/compose'],
  testRegex: '\\.compose-spec\\.ts$',
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 15 * 60_000,
};

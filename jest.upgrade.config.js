/** The rolling-upgrade test (`npm run test:upgrade`, scripts/upgrade); not part of `npm test`. */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/scripts/upgrade'],
  testRegex: '.*\\.upgrade-spec\\.ts$',
  // Each order makes its own database, vhost and Redis prefix, and starts the services itself.
  setupFiles: [],
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 10 * 60_000,
};

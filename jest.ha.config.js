/** The fault tests against the HA testbed (`npm run test:ha`); not part of `npm test`. */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/scripts/ha'],
  testRegex: '.*\\.ha-spec\\.ts$',
  globalSetup: '<rootDir>/scripts/ha/test/global-setup.ts',
  testTimeout: 10 * 60_000,
};

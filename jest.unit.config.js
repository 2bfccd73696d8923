/**
 * `npm run test:unit`: the unit specs beside the code (`*.spec.ts`), which need no database,
 * broker or Redis: no per-run database or vhost is created, and they run two at a time.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testRegex: '.*\\.spec\\.ts$',
  globalSetup: undefined,
  globalTeardown: undefined,
  // The services TestStack runs are not registered: a unit spec starts none.
  setupFiles: [],
  maxWorkers: 2,
};

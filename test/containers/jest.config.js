/** `npm run test:containers` runs these against the compose stack that tools/containers starts
 * (API_URL and DATABASE_URL in the environment); no other infrastructure is provisioned. */
const base = require('../../jest.config.js');

module.exports = {
  ...base,
  rootDir: require('node:path').resolve(__dirname, '../..'),
  testMatch: ['<rootDir>/test/containers/**/*.containers-spec.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 300_000,
  maxWorkers: 1,
};

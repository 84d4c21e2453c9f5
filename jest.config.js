/** Unit specs run beside the code; .int-spec and .e2e-spec files need real Kafka and PostgreSQL,
 * which test/infra/global-setup.ts finds or starts once for the whole run. */
/** Transpile only (types are checked by `npm run lint`): tsconfig's decorator metadata still applies. */
const tsJest = ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true } }];

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    '^.+\\.ts$': tsJest,
    // ESM-only dependencies (of @fastify/static and @fastify/cookie) compiled to CommonJS for
    // jest's runtime, and @fastify/cookie's dynamic import of one into a require.
    '^.+/node_modules/content-disposition/.+\\.js$': tsJest,
    '^.+/node_modules/@fastify/cookie/(index|node_modules/cookie/.+)\\.js$': tsJest,
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/|@fastify/cookie/|cookie/dist/)'],
  moduleNameMapper: {
    '^@castlog/domain$': '<rootDir>/libs/domain/src',
    '^@castlog/event-log$': '<rootDir>/libs/event-log/src',
    '^@castlog/read-model$': '<rootDir>/libs/read-model/src',
    '^@castlog/config$': '<rootDir>/libs/config/src',
    '^@castlog/auth$': '<rootDir>/libs/auth/src',
    '^@castlog/infra$': '<rootDir>/libs/infra/src',
    '^@castlog/runtime$': '<rootDir>/libs/runtime/src',
    '^@castlog/runtime/open-runtime$': '<rootDir>/libs/runtime/src/open-runtime',
    '^@castlog/supervision$': '<rootDir>/libs/supervision/src',
    '^@castlog/projection$': '<rootDir>/libs/projection/src',
    '^@castlog/http$': '<rootDir>/libs/http/src',
    '^@castlog/replay$': '<rootDir>/libs/replay/src',
    '^@castlog/opml$': '<rootDir>/libs/opml/src',
    '^@castlog/feeds$': '<rootDir>/libs/feeds/src',
    '^@castlog/api$': '<rootDir>/apps/api/src',
    '^@castlog/projector$': '<rootDir>/apps/projector/src',
    '^@castlog/resolver$': '<rootDir>/apps/resolver/src',
  },
  globalSetup: '<rootDir>/test/infra/global-setup.ts',
  globalTeardown: '<rootDir>/test/infra/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};

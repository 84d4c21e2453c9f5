import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/results/**', '.castlog/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
    },
  },
  {
    // A function does one job. Migrations are SQL kept as written; test suites are long describes.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/testing/**', '**/migrations/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // HTTP answers in tests are untyped JSON.
    files: ['test/**/*.ts', '**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Dependencies point one way: apps depend on libs, never on another app (apps/embedded, which
    // composes them, aside), and libs never on an app.
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@castlog/api', '@castlog/projector', '@castlog/resolver', '**/apps/**'],
              message: 'A lib never depends on an app.',
            },
          ],
        },
      ],
    },
  },
  ...['api', 'projector', 'resolver', 'cli'].map((app) => {
    const others = ['api', 'projector', 'resolver', 'cli', 'embedded'].filter((other) => other !== app);
    return {
      files: [`apps/${app}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: [
                  ...others.map((other) => `@castlog/${other}`),
                  '**/apps/**',
                  ...others.map((other) => `**/${other}/src/**`),
                ],
                message: 'An app depends on libs, never on another app (only apps/embedded composes them).',
              },
            ],
          },
        ],
      },
    };
  }),
  {
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['@nestjs/*', 'typeorm', 'kafkajs', 'pg', 'node:*', 'crypto', '@castlog/*', '**/apps/**'],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'The domain receives its clock.' },
        { object: 'Math', property: 'random', message: 'Randomness arrives in the event.' },
      ],
    },
  },
);

// @ts-check
// Lint for the whole tree: typescript-eslint's type-aware rules on every TypeScript file, and the
// import rules of docs/architecture.md ("Layers and what may import what"). `npm run check` runs
// it with --max-warnings 0: a rule is either met or switched off here with its reason, never
// carried as a baseline of warnings.
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { importGraphPlugin } from './scripts/lint/import-graph.mjs';

/** The libs from the bottom up; a lib may import only the libs of lower layers (docs/architecture.md). */
const LIB_LAYERS = [
  ['config', 'errors', 'dialects'],
  ['contracts'],
  ['database', 'observability'],
  ['messaging'],
  ['runtime'],
  ['testing'],
];
const SERVICES = ['gateway', 'conversations', 'webhooks'];

const TEST_FILES = [
  '**/*.spec.ts',
  '**/*.e2e-spec.ts',
  '**/*.int-spec.ts',
  '**/*.ha-spec.ts',
  '**/*.compose-spec.ts',
  '**/test/**/*.ts',
];

/** A relative import that leaves its package for services/, scripts/ or bench/. */
const toTopLevel = (folders) => ({
  regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`,
  message:
    'Libraries and services do not import the composition code in scripts/ or bench/ (docs/architecture.md).',
});
/** A relative path into another package's sources (`../../other/src/...`): go through its `@app/` name, or not at all. */
const intoPackage = (names, message) => ({
  regex: `(^|/)(${names.join('|')})/src(/|$)`,
  message,
});

/** The import rule of one lib: only libs of lower layers (its tests may also use @app/testing). */
function libImportRule(lib, forbidden) {
  return [
    'error',
    {
      paths: forbidden.map((other) => ({
        name: `@app/${other}`,
        message: `@app/${lib} may import only the libs below its layer (docs/architecture.md).`,
      })),
      patterns: [
        {
          regex: '^(\\.\\./)+(services|scripts|bench)(/|$)',
          message: 'Libraries never import services, scripts or bench (docs/architecture.md).',
        },
        intoPackage(
          LIB_LAYERS.flat().filter((other) => other !== lib),
          'A lib imports another lib by its @app/ name, never by a relative path.',
        ),
      ],
    },
  ];
}

const libRules = LIB_LAYERS.flatMap((layer, index) =>
  layer.flatMap((lib) => {
    const notBelow = LIB_LAYERS.slice(index)
      .flat()
      .filter((other) => other !== lib);
    return [
      { files: [`libs/${lib}/**/*.ts`], rules: { 'no-restricted-imports': libImportRule(lib, notBelow) } },
      {
        files: TEST_FILES.map((pattern) => `libs/${lib}/${pattern}`),
        rules: {
          'no-restricted-imports': libImportRule(
            lib,
            notBelow.filter((other) => other !== 'testing'),
          ),
        },
      },
    ];
  }),
);

const serviceRules = SERVICES.map((service) => ({
  files: [`services/${service}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          intoPackage(
            SERVICES.filter((other) => other !== service),
            'A service never imports another service: what they share is in libs/contracts (docs/architecture.md).',
          ),
          intoPackage(LIB_LAYERS.flat(), 'Libs are imported by their @app/ name.'),
          toTopLevel(['scripts', 'bench']),
        ],
      },
    ],
  },
}));

/** Production code never imports the test helpers. */
const noTestingInProduction = {
  files: ['services/**/*.ts', 'libs/**/*.ts'],
  ignores: [...TEST_FILES, 'libs/testing/**'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: [{ name: '@app/testing', message: 'Only tests import @app/testing.' }],
      },
    ],
  },
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'deploy/**',
      'services/*/dist/**',
      // The benchmark baseline is kept exactly as it was measured.
      'bench/baseline/**',
      // The SDK's build, and its types as openapi-typescript generates them (npm run sdk:types).
      'sdk/typescript/dist/**',
      'sdk/typescript/src/generated/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // A `let` read by a closure before its one assignment (a late-bound dependency) stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests and their helpers read JSON bodies, SQL rows and log lines that have no static type:
    // their assertions are the type check, so the no-unsafe-* family and explicit `any` are off
    // for them (and async fakes of async interfaces need no await). Everything else applies.
    files: [...TEST_FILES, 'libs/testing/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The few CommonJS files (the bin stub, Jest configs, a compose test receiver) are not in the
    // TypeScript project: linted for plain JavaScript mistakes only.
    files: ['**/*.js', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node, sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node, sourceType: 'module' },
  },
  ...libRules,
  ...serviceRules,
  noTestingInProduction,
  {
    // Inside a package imports point one way: no folder imports the service's top-level wiring,
    // no two folders import each other, no file imports itself back (docs/architecture.md).
    files: ['services/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    plugins: { 'import-graph': importGraphPlugin },
    rules: { 'import-graph/one-way-imports': 'error' },
  },
);

// ESLint's flat config: type-aware typescript-eslint rules for the extension, the engine, the webview, tests,
// benches and scripts. Formatting is Prettier's job (.prettierrc.json), so no stylistic rules live here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Plain JavaScript scripts run on Node; ESLint does not know its globals without the `globals` package.
const NODE_GLOBALS = Object.fromEntries(
  [
    'process',
    'console',
    'URL',
    'Buffer',
    'setTimeout',
    'clearTimeout',
    'require',
    'module',
    '__dirname',
    '__filename',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  {
    ignores: ['dist/**', 'out/**', 'node_modules/**', 'test-results/**', '.e2e-cache/**', 'media/**', '**/*.vsix'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits loses its error: the extension host logs nothing and the user sees nothing.
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test() and describe() return promises that the runner itself awaits.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      // A union that gains a member must fail to compile wherever a switch forgets it.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Type-only imports vanish from the bundles, so a type import never pulls a module into the wrong layer.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Tests drive browser globals and loose JSON through `any`, where a cast would only repeat the assertion.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: { globals: NODE_GLOBALS },
  },
  {
    // A CommonJS file has require() and nothing else to load modules with (scripts/cli-launcher.cjs).
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

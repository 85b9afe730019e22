// Type-aware lint for src/ and test/ (typescript-eslint). Formatting is
// prettier's job (npm run format); this file only catches bugs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/', 'node_modules/', 'coverage/', '.tmp/', 'bench/', 'scripts/', 'test/fixtures/', '*.config.*'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // A non-null assertion needs a reason next to it: `// eslint-disable-next-line ... -- why`.
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Passing on a caught value (`catch (err) { return Promise.reject(err) }`) is a rethrow, not a new rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      'no-console': 'error',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Compile-time checks of the typed API: values exist for their types, tasks only to be typed.
    files: ['test/types/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-vars': 'off', '@typescript-eslint/require-await': 'off' },
  },
  {
    // The in-memory broker implements the async Broker interface synchronously:
    // `async` without `await` is how a throw becomes a rejection there.
    files: ['src/broker/memory/memory-broker.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // The dashboard's page: plain browser modules, served as they are (no build step, no types).
    files: ['src/dashboard/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        URLSearchParams: 'readonly',
        Node: 'readonly',
        confirm: 'readonly',
        uPlot: 'readonly',
      },
    },
  },
  {
    files: ['src/cli/**/*.ts', 'src/demo/**/*.ts'],
    // The CLI and the demo print to the terminal on purpose.
    rules: { 'no-console': 'off' },
  },
);

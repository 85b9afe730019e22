// Type-aware lint for src/ and test/ (typescript-eslint). Formatting is
// prettier's job (npm run format); this file only catches bugs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'test/',
      'dist/',
      'node_modules/',
      'coverage/',
      '.tmp/',
      'bench/',
      'scripts/',
      'test/fixtures/',
      '*.config.*',
    ],
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
    files: ['src/cli/**/*.ts', 'src/demo/**/*.ts'],
    // The CLI and the demo print to the terminal on purpose.
    rules: { 'no-console': 'off' },
  },
);

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**'] },
  {
    // The end-to-end driver and the build script: plain JavaScript run by Node.
    files: ['**/*.mjs'],
    ...js.configs.recommended,
    languageOptions: {
      globals: Object.fromEntries(
        ['process', 'console', 'fetch', 'URL', 'setTimeout', 'clearTimeout'].map((name) => [name, 'readonly'])),
    },
  },
  ...tseslint.configs.strictTypeChecked.map((config) => ({ ...config, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      'eqeqeq': 'error',
    },
  },
  {
    // node:test's describe()/it() return promises the runner itself awaits.
    files: ['test/unit/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
);

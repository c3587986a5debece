import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What the console's modules use of the browser. */
const browserGlobals = Object.fromEntries(
  [
    'document',
    'window',
    'location',
    'sessionStorage',
    'Node',
    'URLSearchParams',
    'TextDecoderStream',
    'requestAnimationFrame',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.turbo/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Small modules (issue 28): no source file over 350 lines; tests may be longer.
    files: [
      'packages/*/src/**/*.ts',
      'apps/*/src/**/*.ts',
      'apps/api/console/**/*.js',
      'scripts/**/*.mjs',
      'bench/**/*.mjs',
    ],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines': ['error', { max: 350, skipBlankLines: false, skipComments: false }] },
  },
  {
    // The task console runs in the browser (plain ES modules, no build step).
    files: ['apps/api/console/**/*.js'],
    languageOptions: { globals: browserGlobals },
  },
);

// eslint for web/, tests/ and bench/ (`make lint`): the recommended rules, which catch real bugs
// (unused or undefined names, unreachable code, duplicate keys), not style; prettier owns style.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['build/**', 'node_modules/**', '**/dist/**'] },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      // One tree runs in browsers, Node, Deno and workerd (WebSocketPair is workerd's).
      globals: {
        ...globals.browser,
        ...globals.node,
        ...globals.worker,
        Deno: 'readonly',
        WebSocketPair: 'readonly',
      },
    },
    rules: {
      'no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
      // Cleanup paths swallow errors on purpose (a socket already closed, a file already gone).
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Validators match control characters on purpose (names and ids must not hold them).
      'no-control-regex': 'off',
    },
  },
];

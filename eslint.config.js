// @ts-check
/**
 * ESLint (flat config): @eslint/js and typescript-eslint's type-aware rules. Each TypeScript file is
 * checked with the tsconfig that owns it (projectService: tsconfig.node.json for core, main, preload,
 * tests, scripts, bench and the tool configs; tsconfig.web.json for the renderer and src/shared).
 * The rules kept find real problems (a promise nobody awaits or handles, `return promise` inside a
 * try that then never catches, an `any` leaking into typed code, a switch that misses a case);
 * in the renderer, React's rules of hooks and complete effect dependencies (eslint-plugin-react-hooks);
 * layout is Prettier's business (.prettierrc.json), so no rule here is about style alone.
 */
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];

export default defineConfig(
  globalIgnores([
    'node_modules/',
    'out/',
    'dist/',
    'data/',
    'docs/',
    'resources/',
    'models/',
    'test/fixtures/',
    'test-results/',
    '.tmp/',
    '.ci/',
    '**/*.d.mts',
  ]),

  js.configs.recommended,
  {
    name: 'tirewear/all',
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      eqeqeq: ['error', 'smart'],
      // `let { a, b } = …` where only `a` is reassigned later stays one declaration.
      'prefer-const': ['error', { destructuring: 'all' }],
      // Prettier puts a computed member call (`sharp(…)\n  [format](…)`) on its own line, which this
      // rule misreads; eslint-config-prettier turns it off for the same reason.
      'no-unexpected-multiline': 'off',
      // `let x = fallback; try { x = … }` is written on purpose here: the fallback documents the failure case.
      'no-useless-assignment': 'off',
    },
  },

  {
    name: 'tirewear/typescript',
    files: TS_FILES,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `return promise` inside try/catch skips the catch and the finally's timing: await it there.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A deprecated API is one a library update removes: replaced where it is used (React 19's
      // FormEvent, TypeBox's Ref(schema), vitest's toThrowError and toMatchTypeOf), or kept on its line
      // with the reason (beforeunload's returnValue, which older Chromium still needs).
      '@typescript-eslint/no-deprecated': 'error',
      // The code base imports types with `import type` (isolatedModules); keep it so.
      '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }],
      // Numbers, booleans, null, URLSearchParams in a template literal read as a person expects.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowBoolean: true,
          allowNullish: true,
          allowNever: true,
          allow: [
            { from: 'lib', name: ['URL', 'URLSearchParams'] },
            { from: 'package', package: '@types/node', name: ['URL', 'URLSearchParams'] },
          ],
        },
      ],
      // React's onSubmit={async () => …}: the handlers catch their own errors and show them.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      // A caught `unknown` passed on as it came is not a new non-Error rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Off, as churn without a bug behind it here: Fastify plugins and handlers are async by contract
      // (require-await); methods handed to expect() or bound by their classes (unbound-method); a
      // `'help' | string` union kept for the reader (no-redundant-type-constituents); the preload's
      // declared bridge type is referenced with a triple-slash on purpose (STYLE.md), so the renderer
      // sees only its .d.ts (triple-slash-reference).
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      '@typescript-eslint/triple-slash-reference': 'off',
    },
  },

  {
    name: 'tirewear/tests',
    files: ['test/**/*.{ts,tsx,mts,cts}'],
    rules: {
      // Tests read JSON answers (`res.json()` is `any`) and poke at internals on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // An async callback handed to a socket or a process event in a test fixture.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },

  // A Fastify handler returns the reply object, which is thenable, to say it has answered: not a
  // promise to await inside its try.
  { name: 'tirewear/http-routes', files: ['src/core/http/**/*.ts'], rules: { '@typescript-eslint/return-await': 'off' } },

  // build/ holds packaging helpers outside both tsconfigs: checked without type information.
  { name: 'tirewear/build', files: ['build/**'], extends: [tseslint.configs.disableTypeChecked] },

  { name: 'tirewear/commonjs', files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },

  // The renderer's React: hooks called in the same order every render, and every value an effect or
  // callback reads in its dependency list (a stale closure is a real bug: a queue sending with an old
  // sign-in). The plugin's React Compiler rules are left off: the app does not use the compiler.
  {
    name: 'tirewear/react-hooks',
    files: ['src/renderer/**/*.{ts,tsx}', 'test/renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },

  // Where code runs: Node everywhere but the renderer, which is a browser page (src/shared runs in both).
  {
    name: 'tirewear/node',
    files: ['src/core/**', 'src/main/**', 'src/preload/**', 'src/shared/**', 'test/**', 'scripts/**', 'bench/**', 'build/**', '*.config.*'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    name: 'tirewear/browser',
    files: ['src/renderer/**', 'src/shared/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
